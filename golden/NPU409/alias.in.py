from flash_attn import flash_attn_func as fa


def attention(q, k, v):
    return fa(q, k, v, causal=True)
