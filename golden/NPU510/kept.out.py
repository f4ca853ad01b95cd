import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel mm_kept_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per AI core (num_aicore: it uses tl.dot) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); torch.matmul may already do this; else an Ascend C operator
@triton.jit
def mm_kept_kernel(A, B, C, D, E, N: tl.constexpr, PRECISION: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, allow_tf32=False))  # valid on Ascend (ieee)
    # TODO(ascend-port): NPU500 [low] a is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a tl.dot's left operand, and a copy (a + 0.0) is merged away by 3.2.0's CSE: check this result on the NPU; if it differs, reload a from memory
    tl.store(D + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision="ieee"))
    # TODO(ascend-port): NPU500 [low] tl.dot input_precision=PRECISION is chosen at run time: on Ascend it must be 'ieee' (or 'hf32' for fp32 inputs), never 'tf32'/'tf32x3'
    # TODO(ascend-port): NPU500 [low] a is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a tl.dot's left operand, and a copy (a + 0.0) is merged away by 3.2.0's CSE: check this result on the NPU; if it differs, reload a from memory
    tl.store(E + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision=PRECISION))  # decided by the caller


def host_dot(a, b, allow_tf32=True, input_precision="tf32"):
    return a @ b
