import torch.nn as nn
import torch.nn.functional as F


class ConfiguredMLP(nn.Module):
    """transformers' MLPs: the activation comes from the config (ACT2FN[...]), not known to be a GELU."""

    def __init__(self, act_fn):
        super().__init__()
        self.act_fn = act_fn

    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return self.act_fn(gate) * up


def approximate_unknown(x, approximate):
    a, b = x.chunk(2, dim=-1)
    return F.gelu(a, approximate=approximate) * b


def halves_reused(x):
    a, b = x.chunk(2, dim=-1)
    out = F.gelu(a) * b
    return out + a


def not_adjacent(x, scale):
    a, b = x.chunk(2, dim=-1)
    b = b * scale
    return F.gelu(a) * b


def three_chunks(x):
    a, b, c = x.chunk(3, dim=-1)
    return F.gelu(a) * b + c


def gelu_of_both(x):
    a, b = x.chunk(2, dim=-1)
    return F.gelu(a) * F.gelu(b)
