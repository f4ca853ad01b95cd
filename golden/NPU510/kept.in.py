import triton
import triton.language as tl


@triton.jit
def mm_kept_kernel(A, B, C, D, E, N: tl.constexpr, PRECISION: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, allow_tf32=False))  # valid on Ascend (ieee)
    tl.store(D + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision="ieee"))
    tl.store(E + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision=PRECISION))  # decided by the caller


def host_dot(a, b, allow_tf32=True, input_precision="tf32"):
    return a @ b
