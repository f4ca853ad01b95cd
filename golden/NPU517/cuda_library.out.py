# TODO(ascend-port): NPU504 [low] CuPy runs only on CUDA: use torch tensors on the npu device (torch covers most of CuPy's NumPy-like API) or NumPy on the host; RawKernel/ElementwiseKernel code needs a torch, Triton-Ascend or Ascend C port
import cupy
import pytest
import torch


@pytest.mark.skipif(not torch.cuda.is_available(), reason="tests the CUDA-only library cupy: none on the NPU")
def test_cupy_roundtrip():
    x = torch.arange(4, device="cuda")
    y = cupy.asarray(x)
    assert int(y.sum()) == 6
