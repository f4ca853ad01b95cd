import torch
import torch_npu
import torch.nn as nn


class SqrtRMSNorm(nn.Module):
    """Division by sqrt, a literal epsilon and torch.mean(..., dim=-1): still RMSNorm."""

    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return torch_npu.npu_rms_norm(x, self.scale, epsilon=1e-5)[0]
