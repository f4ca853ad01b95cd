import torch
import triton
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def make(n):
    device = driver.active.get_active_torch_device()
    return torch.empty(n, device=device)


current = triton.runtime.driver.active.get_current_device()  # works unchanged on Triton-Ascend
