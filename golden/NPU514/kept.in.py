import numpy as np
import triton
import triton.language as tl
from triton.language import clamp


@triton.jit
def kept_clamp_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(Y + i, clamp(tl.load(X + i), -1.0, 2.0))  # imported by name: left alone


def host(x):
    return np.clip(x, -1.0, 2.0), tl.clamp  # outside a kernel
