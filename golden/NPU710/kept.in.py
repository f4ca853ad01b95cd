import torch
from torch.nn.attention.flex_attention import flex_attention


def load(model, x, opts):
    b = torch.compile(model, backend="eager")  # another backend
    c = torch.compile(model, options={"epilogue_fusion": True})  # inductor's options
    d = torch.compile(model, **opts)  # unknown arguments
    e = torch.compile(model, mode="reduce-overhead")  # NPU graphs through inductor
    f = torch.compile(flex_attention)  # only inductor makes a kernel of it
    with torch.no_grad():
        return b(x), c(x), d(x), e(x), f


@torch.compile
def score(x):
    return x.softmax(-1)
