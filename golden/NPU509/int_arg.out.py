import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel strided_copy_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def strided_copy_kernel(X, Y, stride, N: tl.constexpr):
    i = tl.arange(0, N)
    base = tl.cast(stride, tl.int64)
    tl.store(Y + i, tl.load(X + i * base))
