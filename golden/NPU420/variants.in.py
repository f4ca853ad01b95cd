import torch
import torch.nn as nn


class SqrtRMSNorm(nn.Module):
    """Division by sqrt, a literal epsilon and torch.mean(..., dim=-1): still RMSNorm."""

    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-5)
        return norm * self.scale
