import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn as nn
import torch.nn.functional as F


class GEGLU(nn.Module):
    """diffusers' GEGLU: the gate is the second half."""

    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2)

    def forward(self, hidden_states):
        if hidden_states.device.type == "npu":
            return torch_npu.npu_geglu(self.proj(hidden_states), dim=-1, approximate=0, activate_left=False)[0]
        else:
            hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
            return hidden_states * F.gelu(gate)


def geglu_first(x):
    # the gate is the first half, with the tanh GELU
    if x.device.type == "npu":
        hidden = torch_npu.npu_geglu(x, dim=-1, approximate=1, activate_left=True)[0]
    else:
        gate, up = torch.chunk(x, 2, -1)
        hidden = F.gelu(gate, approximate="tanh") * up
    return hidden


def geglu_channels(x):
    # split over the channels of an NCHW map
    if x.device.type == "npu":
        return torch_npu.npu_geglu(x, dim=1, approximate=0, activate_left=True)[0]
    else:
        a, b = x.chunk(2, dim=1)
        return b * F.gelu(a, approximate="none")
