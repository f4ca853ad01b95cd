import triton
import triton.language as tl


@triton.jit
def any_all_kernel(X, Y, a, b, c, d, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    if a > 0 or b > 0 or c > 0:
        x = x + 1.0
    if a > 0 and b > 0 and c > 0 and d > 0:
        x = x * 2.0
    if (a > 0 or b > 0) or c > 0:  # already nested
        x = x - 3.0
    if a > 0 and b > 0 or c > 0:  # no chain: `and` inside `or`
        x = x + 4.0
    tl.store(Y + i, x)
