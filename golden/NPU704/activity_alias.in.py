import torch
from torch.profiler import ProfilerActivity as PA, profile

with profile(activities=[PA.CPU,
                         PA.CUDA]) as prof:
    pass
