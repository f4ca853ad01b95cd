import math

import torch
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Attention(nn.Module):
    """An attention layer as transformers 4.3x wrote them: shape checks that raise between the steps, and the weights
    dropped unless the caller asks for them."""

    def __init__(self, heads, kv_heads, head_dim):
        super().__init__()
        self.num_heads, self.head_dim = heads, head_dim
        self.num_key_value_groups = heads // kv_heads

    def forward(self, query_states, key_states, value_states, attention_mask=None, output_attentions=False):
        bsz, _, q_len, _ = query_states.shape
        kv_seq_len = key_states.shape[-2]
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)

        if attn_weights.size() != (bsz, self.num_heads, q_len, kv_seq_len):
            raise ValueError(f"attention weights of size {attn_weights.size()}")

        if attention_mask is not None:
            if attention_mask.size() != (bsz, 1, q_len, kv_seq_len):
                raise ValueError(f"attention mask of size {attention_mask.size()}")
            attn_weights = attn_weights + attention_mask

        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)

        if attn_output.size() != (bsz, self.num_heads, q_len, self.head_dim):
            raise ValueError(f"attention output of size {attn_output.size()}")

        attn_output = attn_output.transpose(1, 2).contiguous()
        if not output_attentions:
            attn_weights = None
        return attn_output, attn_weights
