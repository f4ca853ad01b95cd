import torch.distributed as dist
# TODO(ascend-port): NPU204 [low] ProcessGroupNCCL does not exist on NPU: the HCCL process group is torch_npu._C._distributed_c10d.ProcessGroupHCCL (its Options differ); dist.new_group(backend="hccl") is usually enough
from torch.distributed import ProcessGroupNCCL


def high_priority_group(ranks):
    # TODO(ascend-port): NPU204 [low] ProcessGroupNCCL does not exist on NPU: the HCCL process group is torch_npu._C._distributed_c10d.ProcessGroupHCCL (its Options differ); dist.new_group(backend="hccl") is usually enough
    options = dist.ProcessGroupNCCL.Options()
    options.is_high_priority_stream = True
    return dist.new_group(ranks, pg_options=options)


def is_nccl_group(group):
    # TODO(ascend-port): NPU204 [low] ProcessGroupNCCL does not exist on NPU: the HCCL process group is torch_npu._C._distributed_c10d.ProcessGroupHCCL (its Options differ); dist.new_group(backend="hccl") is usually enough
    return isinstance(group, ProcessGroupNCCL)
