import triton
import triton.language as tl


@triton.jit
def bias_kernel(X, Y, B, n, HAS_B: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    if not HAS_B or n == 0:
        y = x
    else:
        y = x + tl.load(B + i)
    tl.store(Y + i, y)
