import torch
import torch_npu
import triton
from triton.runtime import driver

DEVICE = torch.device("npu", torch.npu.current_device())


def make(n):
    device = torch.device("npu", torch.npu.current_device())
    return torch.empty(n, device=device)


current = triton.runtime.driver.active.get_current_device()  # works unchanged on Triton-Ascend
