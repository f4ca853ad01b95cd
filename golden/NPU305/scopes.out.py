import torch
import torch_npu
from torch import nn
from torch.nn.functional import layer_norm


def normalize(x, shape):
    # a multi-line call of the bare function name
    y = layer_norm(
        x,
        shape,
    ).type_as(x)
    return y


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layer_norm = nn.LayerNorm(dim)

    def forward(self, x):
        # an nn.LayerNorm attribute named like the function: the module form, seen in its class
        return self.layer_norm(x).type_as(x)


class Plain(nn.Module):
    def forward(self, x):
        # no LayerNorm in this class: left alone
        return self.layer_norm(x.float()).type_as(x)


def outside(x):
    return x.layer_norm(x.float()).type_as(x)
