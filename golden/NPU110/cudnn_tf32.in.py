import torch

torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
