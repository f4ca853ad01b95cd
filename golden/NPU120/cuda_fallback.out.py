# A chain over other devices whose final block is CUDA's: the CUDA fallback stays, and its port goes in an elif
# that asks the NPU before it; also where that chain is nested in a branch shared by CUDA and another device.
import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from accelerate.utils import is_xpu_available


def pick(x):
    if is_xpu_available():
        return x.to("xpu")
    elif hasattr(torch, "npu") and torch.npu.is_available():
        return x.to("npu")
    else:
        return x.to("cuda")


def offload(lora_a, lora_b):
    if lora_a.device.type in ["cuda", "npu", "xpu"]:
        lora_b = lora_b.to(lora_a.device)
    else:
        if lora_b.device.type not in ["cuda", "npu", "xpu"]:
            if is_xpu_available():
                lora_b = lora_b.to("xpu")
            elif hasattr(torch, "npu") and torch.npu.is_available():
                lora_b = lora_b.to("npu")
            else:
                lora_b = lora_b.to("cuda")
        lora_a = lora_a.to(lora_b.device)
    return lora_a, lora_b
