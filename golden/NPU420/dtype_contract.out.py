import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from torch import nn


class Float32RMSNorm(nn.Module):
    """Returns float32 on purpose (a norm before a float32 head): the port must too."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if x.device.type == "npu":
            return torch_npu.npu_rms_norm(x.float(), self.weight.float(), epsilon=self.eps)[0]
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight.float() * x


class CastBackRMSNorm(nn.Module):
    """Casts the product back to the input's dtype: any (input, weight) pair works in the original."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if x.device.type == "npu":
            return torch_npu.npu_rms_norm(x, self.weight.float(), epsilon=self.eps)[0]
        y = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)
