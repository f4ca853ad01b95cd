import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel scale_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(
    configs=[triton.Config({"BLOCK": 16})],
    key=[],
)
@triton.jit
def scale_kernel(X, Y, N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N) * 2.0, mask=i < N)


# TODO(ascend-port): NPU500 [low] Triton kernel shift_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=[triton.Config({})], key=["N"])
@triton.jit
def shift_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(Y + i, tl.load(X + i) + 1.0)
