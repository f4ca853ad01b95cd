import torch


def load(model, x):
    fast = torch.compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
    tuned = torch.compile(
        model,
        fullgraph=True,
        backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor",
    )
    same = torch.compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor", dynamic=False)
    with torch.no_grad():
        return fast(x), tuned(x), same(x)


@torch.compile(backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
def score(x):
    return x.softmax(-1)


def load_bare(model):
    from torch import compile

    return compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
