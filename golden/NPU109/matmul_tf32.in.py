import torch

torch.backends.cuda.matmul.allow_tf32 = True
was = torch.backends.cuda.matmul.allow_tf32
