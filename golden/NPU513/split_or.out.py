import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel bias_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def bias_kernel(X, Y, B, n, HAS_B: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    if not HAS_B:
        y = x
    elif n == 0:
        y = x
    else:
        y = x + tl.load(B + i)
    tl.store(Y + i, y)
