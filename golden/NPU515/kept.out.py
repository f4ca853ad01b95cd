import triton
import triton.language as tl

CONFIGS = [triton.Config({}, num_warps=w) for w in [2, 4]]


# TODO(ascend-port): NPU500 [low] Triton kernel block_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in [16, 32]], key=["N"])  # real tuning
@triton.jit
def block_kernel(X, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, 0.0, mask=i < N)


# TODO(ascend-port): NPU500 [low] Triton kernel regs_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=[triton.Config({}, num_warps=w, maxnreg=128) for w in [2, 4]], key=["N"])  # other options
@triton.jit
def regs_kernel(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, 0.0)


# TODO(ascend-port): NPU500 [low] Triton kernel named_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=CONFIGS, key=["N"])  # a name: not read
@triton.jit
def named_kernel(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, 0.0)


# TODO(ascend-port): NPU500 [low] Triton kernel single_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["N"])  # one config, no options: nothing to do
@triton.jit
def single_kernel(X, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, 0.0, mask=i < N)
