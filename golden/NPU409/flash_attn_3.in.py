from flash_attn_interface import flash_attn_func


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
