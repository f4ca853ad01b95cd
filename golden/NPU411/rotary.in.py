"""Rotary embeddings with flash-attn's fused kernel."""

import torch
from flash_attn.layers.rotary import apply_rotary_emb
import xformers.ops as xops


def rotate(x, cos, sin):
    return apply_rotary_emb(x, cos, sin)


def attend(q, k, v, bias):
    return xops.memory_efficient_attention(q, k, v, attn_bias=bias)
