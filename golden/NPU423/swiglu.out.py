import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn as nn
import torch.nn.functional as F


class FusedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_up_proj = nn.Linear(dim, 2 * hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        # gate and up projections computed together
        if x.device.type == "npu":
            return self.down_proj(torch_npu.npu_swiglu(self.gate_up_proj(x), dim=-1))
        else:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
            return self.down_proj(F.silu(gate) * up)


def swiglu(x):
    if x.device.type == "npu":
        hidden = torch_npu.npu_swiglu(x, dim=-1)
    else:
        x1, x2 = torch.chunk(x, 2, -1)
        hidden = x2 * F.silu(x1)
    return hidden
