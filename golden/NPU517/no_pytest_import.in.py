import torch

import fused_adam_cuda


def test_fused_adam_kernel():
    p = torch.randn(8).cuda()
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
