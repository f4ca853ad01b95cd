import torch.nn as nn
from torch import ones, rsqrt


class RMSNorm(nn.Module):
    """HF's form in a module that does not bind `torch`: the result's dtype needs torch.promote_types, so a TODO."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.float()
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)
