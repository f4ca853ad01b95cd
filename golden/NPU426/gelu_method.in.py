import torch
import torch.nn.functional as F
from torch import nn


class GEGLU(nn.Module):
    """diffusers' GEGLU: the GELU is a method of the class, computed in float32 on mps."""

    def __init__(self, dim_in: int, dim_out: int, bias: bool = True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2, bias=bias)

    def gelu(self, gate: torch.Tensor) -> torch.Tensor:
        if gate.device.type != "mps":
            return F.gelu(gate)
        # mps: gelu is not implemented for float16
        return F.gelu(gate.to(dtype=torch.float32)).to(dtype=gate.dtype)

    def forward(self, hidden_states, *args, **kwargs):
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        return hidden_states * self.gelu(gate)


class NotAGelu(nn.Module):
    """Its `gelu` method scales the GELU: not the op (kept)."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim * 2)

    def gelu(self, gate):
        return F.gelu(gate) * 2

    def forward(self, x):
        x, gate = self.proj(x).chunk(2, dim=-1)
        return x * self.gelu(gate)
