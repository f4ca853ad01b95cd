import triton
import triton.language as tl


@triton.jit
def kept_if_kernel(X, Y, n, A: tl.constexpr, B: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    if n > 0 or A:  # the runtime test comes first
        x = x + 1.0
    if A and B:  # constexpr only: folded already
        x = x + 2.0
    if n > 1 and n < 5:  # runtime only
        x = x + 3.0
    if A and n > 2:  # `and` before an `elif`: not split
        x = x + 4.0
    elif n > 3:
        x = x + 5.0
    tl.store(Y + i, x)


def host(flag, n):
    if flag or n > 0:
        return 1
    return 0
