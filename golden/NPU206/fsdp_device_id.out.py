import os

import torch
import torch_npu
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, local_rank, device, args):
    a = FSDP(model, device_id=torch.device("npu", local_rank))
    b = FSDP(model, device_id=torch.device("npu", torch.npu.current_device()))
    c = FSDP(model, device_id=torch.device("npu", int(os.environ["LOCAL_RANK"])))
    d = FSDP(model, device_id=torch.device("npu", dist.get_rank() % torch.npu.device_count()))
    e = FSDP(model, device_id=torch.device("npu", args.local_rank))
    return a, b, c, d, e


def keep(model, local_rank, device):
    ddp = DDP(model, device_ids=[local_rank], output_device=local_rank)
    fsdp = FSDP(model, device_id=device)
    return ddp, fsdp
