import torch
import torch_npu
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    """Trained under torch.autocast: the norm's output must stay in the activations' dtype (bf16), where
    torch_npu's autocast runs layer_norm in float32."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        with torch.autocast("npu", dtype=torch.bfloat16):
            h = self.proj(x)
            return F.layer_norm(h, (h.shape[-1],), self.norm.weight, self.norm.bias).type_as(h)
