import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel clamp_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def clamp_kernel(X, Y, Z, LO, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(Y + i, tl.minimum(tl.maximum(x, -1.0), 2.0))
    lo = tl.load(LO + i)
    tl.store(Z + i, tl.minimum(tl.maximum(x, lo, propagate_nan=tl.PropagateNan.ALL), lo + 3.0, propagate_nan=tl.PropagateNan.ALL))
