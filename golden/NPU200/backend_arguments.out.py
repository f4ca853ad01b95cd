import os

import deepspeed
import torch
import torch_npu
import torch.distributed as dist
from torch.distributed import Backend, init_process_group


def setup(rank, world_size, ranks):
    dist.init_process_group("hccl", rank=rank, world_size=world_size)
    init_process_group(backend="hccl", init_method="env://")
    torch.distributed.init_process_group(backend="hccl" if torch.npu.is_available() else "gloo")
    group = dist.new_group(ranks, backend="cpu:gloo,npu:hccl")
    subgroup, _ = dist.new_subgroups(2, None, None, "hccl")
    deepspeed.init_distributed(dist_backend="hccl")
    deepspeed.init_distributed("hccl")
    if dist.get_backend() == Backend.HCCL:
        print(dist.Backend.HCCL)
    return group, subgroup
