import torch
from torch import nn


class ShapeRMSNorm(nn.Module):
    """`normalized_shape` may be (rows, dim): a 2-D weight, over which the op would normalise both axes."""

    def __init__(self, normalized_shape, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class AnnotatedShapeRMSNorm(nn.Module):
    def __init__(self, dims: tuple, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dims))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))
