import torch
import torch.nn as nn
from flash_attn import flash_attn_func


class CausalSelfAttention(nn.Module):
    def __init__(self, dropout: float = 0.1):
        super().__init__()
        self.dropout = dropout

    def forward(self, q, k, v):
        # q: (batch, seq, heads, head_dim); k and v may have fewer heads (GQA)
        return flash_attn_func(q, k, v, dropout_p=self.dropout if self.training else 0.0, causal=True)
