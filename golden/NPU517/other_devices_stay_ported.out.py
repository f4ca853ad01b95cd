import pytest
import torch
import torch_npu

import fused_adam_cuda


@pytest.mark.parametrize("device", ["cpu", "npu"])
def test_on_the_device_given(device):
    # the kernel serves the devices the test is given: the device list is ported as any other
    p = torch.randn(8, device=device)
    # TODO(ascend-port): NPU502 [low] fused_adam_cuda.adam() is an op of the CUDA extension fused_adam_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    fused_adam_cuda.adam(p, p.clone(), 1e-3)


@pytest.mark.skipif("cpu" not in ("cpu",), reason="CPU is required")
def test_on_the_cpu():
    p = torch.randn(8, device="cpu")
    # TODO(ascend-port): NPU502 [low] fused_adam_cuda.adam() is an op of the CUDA extension fused_adam_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
    assert p.npu().is_npu


def test_through_xpu_too():
    device = "xpu" if torch.xpu.is_available() else "cuda"
    p = torch.randn(8, device=device)
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
