"""Attention the op cannot take: a bias (ALiBi, T5's position bias) added to the scores is not a mask; weights that
the function returns without HF's output_attentions switch."""

import torch
import torch.nn.functional as F


def alibi_attention(q, k, v, alibi):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    scores = scores + alibi
    return torch.softmax(scores, dim=-1) @ v


def with_weights(q, k, v, attn_mask):
    scores = torch.matmul(q, k.transpose(2, 3))
    scores = scores + attn_mask
    weights = F.softmax(scores, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
