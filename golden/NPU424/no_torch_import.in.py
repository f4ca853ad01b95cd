from torch import nn
from apex.normalization import FusedLayerNorm


class Head(nn.Module):
    """Only `torch.nn` is imported: the subclass imports torch in its forward, under a private name."""

    def __init__(self, dim):
        super().__init__()
        self.norm = FusedLayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(self.norm(x))
