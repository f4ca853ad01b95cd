import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, local_rank, device, args):
    a = FSDP(model, device_id=local_rank)
    b = FSDP(model, device_id=torch.cuda.current_device())
    c = FSDP(model, device_id=int(os.environ["LOCAL_RANK"]))
    d = FSDP(model, device_id=dist.get_rank() % torch.cuda.device_count())
    e = FSDP(model, device_id=args.local_rank)
    return a, b, c, d, e


def keep(model, local_rank, device):
    ddp = DDP(model, device_ids=[local_rank], output_device=local_rank)
    fsdp = FSDP(model, device_id=device)
    return ddp, fsdp
