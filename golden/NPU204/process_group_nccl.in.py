import torch.distributed as dist
from torch.distributed import ProcessGroupNCCL


def high_priority_group(ranks):
    options = dist.ProcessGroupNCCL.Options()
    options.is_high_priority_stream = True
    return dist.new_group(ranks, pg_options=options)


def is_nccl_group(group):
    return isinstance(group, ProcessGroupNCCL)
