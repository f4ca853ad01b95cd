import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    """Named RMSNorm, but subtracts the mean: LayerNorm without bias. The name does not decide."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x = x - x.mean(-1, keepdim=True)
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class ResidualRMSNorm(nn.Module):
    """Adds a residual first and returns two values."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, residual):
        x = x + residual
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps), x


class UnscaledRMSNorm(nn.Module):
    """No weight: npu_rms_norm needs a gamma."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class MatrixScaleRMSNorm(nn.Module):
    """A 2-D weight: the fused op would normalise over two axes."""

    def __init__(self, rows, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(rows, dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class SecondAxisRMSNorm(nn.Module):
    """Normalises over dim -2."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-2, keepdim=True) + self.eps)
