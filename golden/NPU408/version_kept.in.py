import flash_attn
from flash_attn import flash_attn_func


def attention(q, k, v):
    # softcap has no NPU mapping: this call stays on flash-attn, so its version check must stay too
    if flash_attn.__version__ >= "2.6.0":
        return flash_attn_func(q, k, v, causal=True, softcap=30.0)
    return flash_attn_func(q, k, v, causal=True)
