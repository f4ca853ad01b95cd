import triton
import triton.language as tl


@triton.jit
def mm_tf32_kernel(A, B, C, D, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    c = tl.dot(a, b, allow_tf32=True)
    d = tl.dot(
        a,
        b,
        input_precision="tf32",
    )
    tl.store(C + i[:, None] * N + i[None, :], c)
    tl.store(D + i[:, None] * N + i[None, :], d)
