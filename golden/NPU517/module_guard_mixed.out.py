import pytest
import torch
import torch_npu

import fused_layer_norm_cuda

# a test of torch's own op is in the module too: the module's guard is ported, the kernel's test gets its own
pytestmark = pytest.mark.skipif(not torch.npu.is_available(), reason="needs CUDA")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="tests the CUDA kernel fused_layer_norm_cuda.forward: none on the NPU")
def test_forward():
    x = torch.randn(4, 8, device="cuda")
    fused_layer_norm_cuda.forward(x, (8,), 1e-5)


def test_reference():
    x = torch.randn(4, 8, device="npu")
    torch.nn.functional.layer_norm(x, (8,))
