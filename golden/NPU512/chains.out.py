import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel any_all_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def any_all_kernel(X, Y, a, b, c, d, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    if a > 0 or (b > 0 or c > 0):
        x = x + 1.0
    if a > 0 and (b > 0 and (c > 0 and d > 0)):
        x = x * 2.0
    if (a > 0 or b > 0) or c > 0:  # already nested
        x = x - 3.0
    if a > 0 and b > 0 or c > 0:  # no chain: `and` inside `or`
        x = x + 4.0
    tl.store(Y + i, x)
