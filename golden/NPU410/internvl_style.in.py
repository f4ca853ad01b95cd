import torch
import torch.nn as nn
from einops import rearrange

try:  # v1
    from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func
except ImportError:  # v2
    from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func

from flash_attn.bert_padding import pad_input, unpad_input


class FlashAttention(nn.Module):
    def forward(self, qkv, key_padding_mask, causal=False):
        batch_size, seqlen, _, nheads, _ = qkv.shape
        x = rearrange(qkv, "b s three h d -> b s (three h d)")
        x_unpad, indices, cu_seqlens, max_s = unpad_input(x, key_padding_mask)
        x_unpad = rearrange(x_unpad, "nnz (three h d) -> nnz three h d", three=3, h=nheads)
        output_unpad = flash_attn_unpadded_qkvpacked_func(x_unpad, cu_seqlens, max_s, 0.0, causal=causal)
        return pad_input(rearrange(output_unpad, "nnz h d -> nnz (h d)"), indices, batch_size, seqlen)
