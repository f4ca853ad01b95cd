import pytest
import torch
import torch_npu
import triton
import triton.language as tl

from my_project.kernels import rms_norm_kernel


# TODO(ascend-port): NPU500 [low] Triton kernel _copy_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@pytest.mark.parametrize("n", [7, 1024])
@pytest.mark.skipif(not torch.cuda.is_available(), reason="tests the CUDA kernel _copy_kernel: none on the NPU")
def test_copy_kernel(n):
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    assert torch.equal(x, y)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="tests the CUDA kernel rms_norm_kernel: none on the NPU")
def test_imported_kernel():
    x = torch.randn(4, 64, device="cuda")
    rms_norm_kernel[(4,)](x, x, 64, 1e-6)


def test_functions_of_a_list():
    # a list of functions indexed and called: no kernel launch, the test is ported
    ops = [torch.neg, torch.abs]
    x = torch.randn(4, device="npu")
    assert ops[1](ops[0](x)).min() >= 0
