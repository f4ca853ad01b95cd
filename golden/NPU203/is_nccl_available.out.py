import torch
import torch_npu
import torch.distributed as dist
from torch.distributed import is_hccl_available


def backend():
    if dist.is_hccl_available() and torch.npu.is_available():
        return "hccl"
    if is_hccl_available():
        return "hccl"
    return "gloo"
