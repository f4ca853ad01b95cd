import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from torch import nn

if hasattr(torch, "rsqrt"):

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            if x.device.type == "npu":
                dtype = torch.promote_types(x.dtype, self.weight.dtype)
                return torch_npu.npu_rms_norm(x, self.weight.float(), epsilon=self.eps)[0].to(dtype)
            # a comment naming rsqrt
            return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class NoForward(nn.Module):
    def norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
