import torch
import torch_npu

# TODO(ascend-port): NPU107 [low] torch.cuda.Stream.priority_range has no torch.npu counterpart (torch_npu 2.14.0; in no release ascend-port knows): port by hand
low, high = torch.cuda.Stream.priority_range()
stream = torch.npu.Stream(priority=high)
stream.synchronize()
torch.npu.Stream.synchronize(stream)
