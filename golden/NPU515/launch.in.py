import torch
import triton
import triton.language as tl

from .ops import imported_kernel


@triton.jit
def add_kernel(X, Y, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N) + 1.0, mask=i < N)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in [64, 128]], key=["N"])
@triton.jit
def tuned_kernel(X, Y, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N), mask=i < N)


@triton.jit
def warps_kernel(X, N, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, num_warps, mask=i < N)


def add(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, num_warps=4)
    add_kernel[(triton.cdiv(n, 128),)](
        x,
        y,
        n,
        BLOCK=128,
        num_warps=8,
        num_stages=2,
    )
    add_kernel[(triton.cdiv(n, 128),)](x, y, n, num_warps=4, BLOCK=128, num_ctas=1)
    tuned_kernel[(triton.cdiv(n, 128),)](x, y, n, num_warps=4)  # autotuned: kept
    imported_kernel[(1,)](x, y, n, num_warps=4)  # another module's kernel: kept
    warps_kernel[(1,)](y, n, BLOCK=128, num_warps=4)  # a kernel argument: kept
    return y
