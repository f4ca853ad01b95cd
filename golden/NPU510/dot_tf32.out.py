import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel mm_tf32_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per AI core (num_aicore: it uses tl.dot) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); torch.matmul may already do this; else an Ascend C operator
@triton.jit
def mm_tf32_kernel(A, B, C, D, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(A + i[:, None] * N + i[None, :])
    b = tl.load(B + i[:, None] * N + i[None, :])
    c = tl.dot(a, b)
    # TODO(ascend-port): NPU500 [low] a is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a tl.dot's left operand, and a copy (a + 0.0) is merged away by 3.2.0's CSE: check this result on the NPU; if it differs, reload a from memory
    d = tl.dot(
        a,
        b,
    )
    tl.store(C + i[:, None] * N + i[None, :], c)
    tl.store(D + i[:, None] * N + i[None, :], d)
