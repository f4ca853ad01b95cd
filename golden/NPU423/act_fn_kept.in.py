import torch
from torch import nn

from transformers.activations import ACT2FN


class ActOnProduct(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        # the activation of the product, not of one factor
        return self.act_fn(self.gate_proj(x) * self.up_proj(x))


class GeluMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(dim, hidden)
        self.act = nn.GELU()

    def forward(self, x):
        # a known activation that is not SiLU
        return self.act(self.fc1(x)) * self.fc2(x)


class OtherStructure(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x, y, scale):
        # projections of two tensors, and a factor that may broadcast
        a = self.act_fn(self.gate_proj(x)) * self.up_proj(y)
        b = self.act_fn(self.gate_proj(x)) * scale
        return a + b
