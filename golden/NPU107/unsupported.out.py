import torch

# TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart (torch_npu 2.14.0): port by hand
used = torch.cuda.memory_usage()
# TODO(ascend-port): NPU107 [low] torch.cuda.comm has no torch.npu counterpart (torch_npu 2.14.0): port by hand
from torch.cuda import comm
