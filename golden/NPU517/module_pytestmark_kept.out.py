import pytest
import torch
import torch_npu

import fused_layer_norm_cuda

pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"), pytest.mark.kernels]


def make_input():
    return torch.randn(4, 8).npu()


def test_forward():
    x = torch.randn(4, 8, device="cuda")
    fused_layer_norm_cuda.forward(x, (8,), 1e-5)


class TestLayerNorm:
    def test_backward(self):
        x = torch.randn(4, 8).cuda()
        fused_layer_norm_cuda.backward(x, x, (8,), 1e-5)
