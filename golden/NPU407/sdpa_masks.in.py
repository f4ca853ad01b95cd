import torch.nn.functional as F


def causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def padded(q, k, v, lengths, positions):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=positions[None, :] < lengths[:, None])


def additive(q, k, v, attn_bias):
    return F.scaled_dot_product_attention(q, k, v, attn_bias, 0.0)
