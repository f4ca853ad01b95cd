import torch

try:
    import flash_attn

    FLASH_ATTN_2_AVAILABLE = True
except ModuleNotFoundError:
    FLASH_ATTN_2_AVAILABLE = False


def attention(q, k, v, cu, max_len, deterministic=False):
    assert FLASH_ATTN_2_AVAILABLE
    if flash_attn.__version__ >= "2.1.0":  # every flash-attn call is ported: reads the release the port follows
        return flash_attn.flash_attn_varlen_func(q, k, v, cu, cu, max_len, max_len, deterministic=deterministic)
    raise RuntimeError("flash-attn >= 2.1 needed")
