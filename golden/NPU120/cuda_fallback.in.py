# A chain over other devices whose final block is CUDA's: the CUDA fallback stays, and its port goes in an elif
# that asks the NPU before it; also where that chain is nested in a branch shared by CUDA and another device.
import torch
from accelerate.utils import is_xpu_available


def pick(x):
    if is_xpu_available():
        return x.to("xpu")
    else:
        return x.to("cuda")


def offload(lora_a, lora_b):
    if lora_a.device.type in ["cuda", "xpu"]:
        lora_b = lora_b.to(lora_a.device)
    else:
        if lora_b.device.type not in ["cuda", "xpu"]:
            if is_xpu_available():
                lora_b = lora_b.to("xpu")
            else:
                lora_b = lora_b.to("cuda")
        lora_a = lora_a.to(lora_b.device)
    return lora_a, lora_b
