import torch
from flash_attn import flash_attn_kvpacked_func, flash_attn_qkvpacked_func


def self_attention(qkv):
    return flash_attn_qkvpacked_func(qkv, 0.0, causal=True)


def cross_attention(q, kv, scale):
    return flash_attn_kvpacked_func(q, kv, softmax_scale=scale)
