from unittest import TestCase, skipUnless

import torch

import fused_dense_cuda


class TestFusedDense(TestCase):
    @skipUnless(torch.cuda.is_available(), "tests the CUDA kernel fused_dense_cuda.linear_bias_forward: none on the NPU")
    def test_linear_bias(self):
        x = torch.randn(4, 8).cuda()
        w = torch.randn(16, 8).cuda()
        fused_dense_cuda.linear_bias_forward(x, w, torch.zeros(16).cuda())
