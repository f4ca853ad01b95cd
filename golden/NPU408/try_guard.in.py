import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func

    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


def attention(q, k, v, causal=True):
    if HAS_FLASH_ATTN:
        return flash_attn_func(q, k, v, causal=causal)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal)
    return out.transpose(1, 2)
