"""An HF-style eager function whose caller in the module passes a position bias as its attention_mask
(granite_speech5, swin, SAM do): `< 0` would read the bias as a mask, so the function stays."""

import torch
from torch import nn


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    attn_output = torch.matmul(attn_weights, value)
    return attn_output.transpose(1, 2), attn_weights


class Attention(nn.Module):
    def forward(self, query, key, value, position_bias):
        attention_interface = eager_attention_forward
        return attention_interface(self, query, key, value, attention_mask=position_bias, scaling=0.125)
