import torch
import torch.nn as nn
import torch.nn.functional as F


class FusedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_up_proj = nn.Linear(dim, 2 * hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        # gate and up projections computed together
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


def swiglu(x):
    x1, x2 = torch.chunk(x, 2, -1)
    hidden = x2 * F.silu(x1)
    return hidden
