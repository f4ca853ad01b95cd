import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from torch import nn

from transformers.activations import ACT2FN


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        if x.device.type == "npu" and (type(self.act_fn) is torch.nn.SiLU or type(self.act_fn).__name__ == "SiLUActivation"):
            down_proj = self.down_proj(torch_npu.npu_swiglu(torch.cat((self.gate_proj(x), self.up_proj(x)), dim=-1), dim=-1))
        else:
            down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class ParamMLP(nn.Module):
    def __init__(self, dim, hidden, act_layer=nn.SiLU):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w3 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)
        self.act = act_layer()

    def forward(self, hidden_states):
        if hidden_states.device.type == "npu" and (type(self.act) is torch.nn.SiLU or type(self.act).__name__ == "SiLUActivation"):
            return self.w2(torch_npu.npu_swiglu(torch.cat((self.w1(hidden_states), self.w3(hidden_states)), dim=-1), dim=-1))
        else:
            return self.w2(self.w3(hidden_states) * self.act(self.w1(hidden_states)))
