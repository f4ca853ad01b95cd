import os

import deepspeed
import torch
import torch.distributed as dist
from torch.distributed import Backend, init_process_group


def setup(rank, world_size, ranks):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    init_process_group(backend="nccl", init_method="env://")
    torch.distributed.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    group = dist.new_group(ranks, backend="cpu:gloo,cuda:nccl")
    subgroup, _ = dist.new_subgroups(2, None, None, "nccl")
    deepspeed.init_distributed(dist_backend="nccl")
    deepspeed.init_distributed("nccl")
    if dist.get_backend() == Backend.NCCL:
        print(dist.Backend.NCCL)
    return group, subgroup
