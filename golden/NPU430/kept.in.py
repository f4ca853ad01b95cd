"""SDPA calls NPU430 leaves: a bool mask, no mask, is_causal alone (torch_npu's SDPA takes them to its fused kernel),
a bias under its own name, a mask something is added to, a mask a caller passes a bias to, q an expression."""

import torch
import torch.nn.functional as F


def padded(q, k, v, lengths):
    attention_mask = torch.arange(k.shape[2])[None, :] < lengths[:, None]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask[:, None, None, :])


def plain(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def t5_like(q, k, v, position_bias):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=position_bias, scale=1.0)


def with_alibi(q, k, v, attention_mask, alibi):
    attention_mask = attention_mask + alibi
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)


def attend(q, k, v, attention_mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)


def layer(q, k, v, relative_position_bias):
    return attend(q, k, v, relative_position_bias)


def transposed(q, k, v, attention_mask):
    return F.scaled_dot_product_attention(q.transpose(1, 2), k, v, attn_mask=attention_mask)


def pooled(q, k, v, mask):
    attn_mask = mask[:, None, None, :].bool()
    attn_mask = F.pad(attn_mask, (1, 0), value=True)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
