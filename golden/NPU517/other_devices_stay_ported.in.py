import pytest
import torch

import fused_adam_cuda


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_on_the_device_given(device):
    # the kernel serves the devices the test is given: the device list is ported as any other
    p = torch.randn(8, device=device)
    fused_adam_cuda.adam(p, p.clone(), 1e-3)


@pytest.mark.skipif("cpu" not in ("cpu",), reason="CPU is required")
def test_on_the_cpu():
    p = torch.randn(8, device="cpu")
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
    assert p.cuda().is_cuda


def test_through_xpu_too():
    device = "xpu" if torch.xpu.is_available() else "cuda"
    p = torch.randn(8, device=device)
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
