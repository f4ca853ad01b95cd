"""Where a kernel is work: one TODO above each kernel launched here (or maybe launched from another module), none
above a device helper only called from kernels. The TODO says how many programs, which cores and which tiles."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x, s):
    # a device helper: inlined into the kernels that call it
    return x * s


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, _scale(tl.load(x_ptr + offs, mask=offs < n), s), mask=offs < n)


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, allow_tf32=False))


@triton.jit
def exported_kernel(x_ptr):
    # launched by another module (this one only defines it)
    tl.store(x_ptr, tl.load(x_ptr) + 1)


class Runner:
    def __init__(self):
        self.kernel = bmm_kernel

    def run(self, x, s):
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), s, BLOCK=1024)
        c = torch.empty(16, 16, device=x.device)
        self.kernel[(1,)](x, x, c, BM=16, BN=16, BK=16)
        bmm_kernel.run(x, x, c, BM=16, BN=16, BK=16, grid=(1,), warmup=False)
        return y, c
