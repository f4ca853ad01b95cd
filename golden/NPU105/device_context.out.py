# In a module that reads Triton's target, the comparisons of real devices are still ported; only the name that
# holds the target (the module-level `device`) keeps "cuda".
import torch
import torch_npu
import triton


def get_available_device():
    return triton.runtime.driver.active.get_current_target().backend


device = get_available_device()
IS_NVIDIA = device == "cuda"


def run(x, device):
    # `device` here is a parameter (a torch device), not the module's Triton target
    if device == "npu":
        x = x.half()
    if x.device.type == "npu":
        torch.npu.synchronize()
    if "npu" in str(x.device):
        x = x.contiguous()
    return x


def accelerator_name(accelerator):
    return accelerator.device_name() == "npu"
