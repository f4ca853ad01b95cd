import numba
import torch
from numba import jit


@torch.jit.script
def scripted(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@jit(nopython=True)
def numba_cpu(x):
    return x + 1


@numba.njit
def numba_njit(x):
    return x + 1


def jit(fn):  # a local decorator that happens to be called jit
    return fn


@jit
def plain(x):
    return x
