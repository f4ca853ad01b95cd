import triton
import triton.language as tl


@triton.jit
def initial_state_kernel(H, H0, n, USE_H0: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    h = tl.zeros([N], dtype=tl.float32)
    if USE_H0 and n > 0:
        h = tl.load(H0 + i)
    else:
        h = h - 1.0
    tl.store(H + i, h)
