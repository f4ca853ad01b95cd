import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.distributed._symmetric_memory import set_backend

# A symmetric-memory backend, not a process group: "NCCL" stays, with a TODO.
symm_mem.set_backend("NCCL")
set_backend("NCCL")
dist.init_process_group("nccl")
