import numpy as np
import triton
import triton.language as tl
from triton.language import clamp


# TODO(ascend-port): NPU500 [low] Triton kernel kept_clamp_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def kept_clamp_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(Y + i, clamp(tl.load(X + i), -1.0, 2.0))  # imported by name: left alone


def host(x):
    return np.clip(x, -1.0, 2.0), tl.clamp  # outside a kernel
