import torch
import torch.distributed as dist
from torch.distributed import is_nccl_available


def backend():
    if dist.is_nccl_available() and torch.cuda.is_available():
        return "nccl"
    if is_nccl_available():
        return "nccl"
    return "gloo"
