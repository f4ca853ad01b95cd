import torch_npu
from torch.distributed.fsdp import FullyShardedDataParallel


def wrap(model, local_rank):
    return FullyShardedDataParallel(model, device_id=f"npu:{local_rank}")
