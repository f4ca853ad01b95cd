import triton
import triton.language as tl

CONFIGS = [triton.Config({}, num_warps=w) for w in [2, 4]]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in [16, 32]], key=["N"])  # real tuning
@triton.jit
def block_kernel(X, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, 0.0, mask=i < N)


@triton.autotune(configs=[triton.Config({}, num_warps=w, maxnreg=128) for w in [2, 4]], key=["N"])  # other options
@triton.jit
def regs_kernel(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, 0.0)


@triton.autotune(configs=CONFIGS, key=["N"])  # a name: not read
@triton.jit
def named_kernel(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, 0.0)


@triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["N"])  # one config, no options: nothing to do
@triton.jit
def single_kernel(X, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, 0.0, mask=i < N)
