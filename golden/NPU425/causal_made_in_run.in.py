"""Llama-style eager attention whose causal mask is made between the steps, of a size the run reads
(`seq = query.shape[-2]`): the mask's code goes into the fused call with the size read from q."""

import torch
import torch.nn.functional as F


def attention(query, key, value, scaling):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    seq = query.shape[-2]
    causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=query.device), diagonal=1)
    attn_weights = attn_weights.masked_fill(causal, float("-inf"))
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(attn_weights, value)


def dropped_mask(query, key, value, scaling):
    # a mask of random draws made in the run: written twice it would draw twice, so the attention is left
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    drop = torch.rand(query.shape[-2], key.shape[-2], device=query.device) < 0.1
    attn_weights = attn_weights.masked_fill(drop, float("-inf"))
    attn_weights = F.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value)
