import torch

from flash_attn import flash_attn_func, flash_attn_with_kvcache

__all__ = ["attention", "decode"]


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)


def decode(q, k_cache, v_cache, cache_seqlens):
    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=cache_seqlens)
