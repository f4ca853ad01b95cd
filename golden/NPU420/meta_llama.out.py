import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn as nn


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        if x.device.type == "npu":
            dtype = torch.promote_types(x.dtype, self.weight.dtype)
            return torch_npu.npu_rms_norm(x, self.weight.float(), epsilon=self.eps)[0].to(dtype)
        output = self._norm(x.float()).type_as(x)
        return output * self.weight
