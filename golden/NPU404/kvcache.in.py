from flash_attn import flash_attn_with_kvcache


def decode(q, k_cache, v_cache, k, v, cache_seqlens):
    return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=cache_seqlens, causal=True)
