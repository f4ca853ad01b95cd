import torch
import torch_npu
import triton
import triton.language as tl

from .ops import imported_kernel


# TODO(ascend-port): NPU500 [low] Triton kernel add_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def add_kernel(X, Y, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N) + 1.0, mask=i < N)


# TODO(ascend-port): NPU500 [low] Triton kernel tuned_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in [64, 128]], key=["N"])
@triton.jit
def tuned_kernel(X, Y, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < N), mask=i < N)


# TODO(ascend-port): NPU500 [low] Triton kernel warps_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def warps_kernel(X, N, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, num_warps, mask=i < N)


def add(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    add_kernel[(triton.cdiv(n, 128),)](
        x,
        y,
        n,
        BLOCK=128,
    )
    add_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, num_ctas=1)
    tuned_kernel[(triton.cdiv(n, 128),)](x, y, n, num_warps=4)  # autotuned: kept
    imported_kernel[(1,)](x, y, n, num_warps=4)  # another module's kernel: kept
    warps_kernel[(1,)](y, n, BLOCK=128, num_warps=4)  # a kernel argument: kept
    return y
