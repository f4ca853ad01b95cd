# A type check runs none of bitsandbytes' code, and `torch.optim.RMSprop` is torch's even where a function imports
# bitsandbytes' RMSprop: neither gets a TODO. Building a bitsandbytes object by its bare name does.
import torch
from bitsandbytes.nn import Int8Params


def is_quantized(m):
    import bitsandbytes as bnb

    return isinstance(m, (bnb.nn.Linear4bit, Int8Params))


def bnb_rmsprop():
    from bitsandbytes.optim import RMSprop

    return RMSprop


def torch_rmsprop():
    return torch.optim.RMSprop


def quantize(w):
    return Int8Params(w, requires_grad=False)
