import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel mm_tf32x3_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per AI core (num_aicore: it uses tl.dot) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); torch.matmul may already do this; else an Ascend C operator
@triton.jit
def mm_tf32x3_kernel(A, B, C, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision='ieee'))
