import triton
import triton.language as tl


@triton.jit
def mm_tf32x3_kernel(A, B, C, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision='tf32x3'))
