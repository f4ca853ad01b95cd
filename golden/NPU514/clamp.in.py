import triton
import triton.language as tl


@triton.jit
def clamp_kernel(X, Y, Z, LO, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(Y + i, tl.clamp(x, -1.0, 2.0))
    lo = tl.load(LO + i)
    tl.store(Z + i, tl.clamp(x, lo, lo + 3.0, propagate_nan=tl.PropagateNan.ALL))
