import torch
from torch import nn
from transformers.models.llama.modeling_llama import rotate_half


class RotaryEmbedding(nn.Module):
    def __init__(self, inv_freq, attention_scaling):
        super().__init__()
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention_scaling = attention_scaling  # YaRN / LongRoPE: above 1

    def forward(self, x, position_ids):
        freqs = position_ids[..., None].float() * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * self.attention_scaling).to(x.dtype), (emb.sin() * self.attention_scaling).to(x.dtype)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    # TODO(ascend-port): NPU422 [medium] npu_rotary_mul takes cos/sin in [-1, 1] and this module scales them (attention_scaling, above 1 for YaRN/LongRoPE): use torch_npu.npu_rotary_mul(x, cos, sin) only where rope scaling is off
    q_embed = (q * cos) + (rotate_half(q) * sin)
    # TODO(ascend-port): NPU422 [medium] npu_rotary_mul takes cos/sin in [-1, 1] and this module scales them (attention_scaling, above 1 for YaRN/LongRoPE): use torch_npu.npu_rotary_mul(x, cos, sin) only where rope scaling is off
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed
