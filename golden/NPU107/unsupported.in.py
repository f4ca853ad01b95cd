import torch

used = torch.cuda.memory_usage()
from torch.cuda import comm
