import torch

try:
    from flash_attn import flash_attn_func, flash_attn_with_kvcache

    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)


def decode(q, k_cache, v_cache, lens):
    # not ported (KV cache): the guard stays, HAS_FLASH_ATTN stays False on an NPU host
    if HAS_FLASH_ATTN:
        return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens)
    return None
