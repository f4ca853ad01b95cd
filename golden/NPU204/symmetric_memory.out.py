import torch_npu
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.distributed._symmetric_memory import set_backend

# A symmetric-memory backend, not a process group: "NCCL" stays, with a TODO.
# TODO(ascend-port): NPU204 [low] torch.distributed._symmetric_memory.set_backend selects a symmetric-memory backend, not a process group: torch_npu has no NCCL one; use the backend your torch_npu release registers, or drop the call
symm_mem.set_backend("NCCL")
# TODO(ascend-port): NPU204 [low] torch.distributed._symmetric_memory.set_backend selects a symmetric-memory backend, not a process group: torch_npu has no NCCL one; use the backend your torch_npu release registers, or drop the call
set_backend("NCCL")
dist.init_process_group("hccl")
