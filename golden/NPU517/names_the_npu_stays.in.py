import pytest
import torch

import fused_adam_cuda


def test_fused_adam_on_the_device():
    device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cuda"
    p = torch.randn(8, device=device)
    if device == "cuda":
        fused_adam_cuda.adam(p, p.clone(), 1e-3)
