import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 16}, num_warps=1, num_stages=1),
        triton.Config({"BLOCK": 16}, num_warps=2, num_stages=2),
        triton.Config({"BLOCK": 16}, num_warps=4),
    ],
    key=[],
)
@triton.jit
def scale_kernel(X, Y, N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N) * 2.0, mask=i < N)


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [1, 2, 4, 8]], key=["N"])
@triton.jit
def shift_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(Y + i, tl.load(X + i) + 1.0)
