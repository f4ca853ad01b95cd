import torch
import torch_npu
from torch import nn

if hasattr(torch, "rsqrt"):

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]


class NoForward(nn.Module):
    def norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
