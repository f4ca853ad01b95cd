import torch


class FusedLayerNorm(torch.nn.LayerNorm):
    """A project's own FusedLayerNorm (not apex's): nothing to port."""

    def extra_repr(self):
        return "fused"


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = FusedLayerNorm(dim)

    def forward(self, x):
        return self.norm(x)
