import torch
import torch_npu
from torch_npu.profiler import ProfilerActivity as PA, profile

with profile(activities=[PA.CPU,
                         PA.NPU]) as prof:
    pass
