import unittest

import pytest
import torch

import fused_layer_norm_cuda


# every test of the class tests the kernel: the class's CUDA guard stays CUDA's, its tests need none of their own
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
class TestLayerNorm:
    def test_forward(self):
        x = torch.randn(4, 8, device="cuda")
        fused_layer_norm_cuda.forward(x, (8,), 1e-5)

    def test_backward(self):
        x = torch.randn(4, 8).cuda()
        fused_layer_norm_cuda.backward(x, x, (8,), 1e-5)


@unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
class LayerNormCase(unittest.TestCase):
    def setUp(self):
        self.x = torch.randn(4, 8).cuda()

    def test_forward(self):
        fused_layer_norm_cuda.forward(self.x, (8,), 1e-5)
