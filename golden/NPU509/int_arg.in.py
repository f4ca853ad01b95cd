import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(X, Y, stride, N: tl.constexpr):
    i = tl.arange(0, N)
    base = stride.to(tl.int64)
    tl.store(Y + i, tl.load(X + i * base))
