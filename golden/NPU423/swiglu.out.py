import torch
import torch_npu
import torch.nn as nn
import torch.nn.functional as F


class FusedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_up_proj = nn.Linear(dim, 2 * hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        # gate and up projections computed together
        return self.down_proj(torch_npu.npu_swiglu(self.gate_up_proj(x), dim=-1))


def swiglu(x):
    hidden = torch_npu.npu_swiglu(x, dim=-1)
    return hidden
