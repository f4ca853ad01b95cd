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
            dtype = torch.promote_types(x.dtype, self.weight.dtype)
            return torch_npu.npu_rms_norm(x, self.weight.float(), epsilon=self.eps)[0].to(dtype)


class NoForward(nn.Module):
    def norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
