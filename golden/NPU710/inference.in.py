import torch


def load(model, x):
    fast = torch.compile(model)
    tuned = torch.compile(
        model,
        fullgraph=True,
    )
    same = torch.compile(model, backend="inductor", dynamic=False)
    with torch.no_grad():
        return fast(x), tuned(x), same(x)


@torch.compile()
def score(x):
    return x.softmax(-1)


def load_bare(model):
    from torch import compile

    return compile(model)
