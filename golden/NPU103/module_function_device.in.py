import torch

from helpers import load_tables


def rotary_tables(seq, dim, device, dtype=torch.float32):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device, dtype=dtype) / dim))
    return torch.outer(torch.arange(seq, device=device, dtype=dtype), inv_freq)


@torch.no_grad()
def make_buffer(size, dev):
    return torch.zeros(size, device=dev)


def name_of(backend):
    return backend.upper()


def reloaded(device):
    return device


reloaded = staticmethod(reloaded)


@some_registry.register
def registered(device):
    return torch.ones(1, device=device)


tables = rotary_tables(128, 64, "cuda")
buffer = make_buffer(8, "cuda:0")
# Not a device parameter, a name bound twice, a decorator that may wrap, an imported function: unchanged.
label = name_of("cuda")
again = reloaded("cuda")
other = registered("cuda")
loaded = load_tables(128, "cuda")
