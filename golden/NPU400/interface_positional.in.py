import math

import torch
from flash_attn.flash_attn_interface import flash_attn_func


def attention(q, k, v):
    scale = 1.0 / math.sqrt(2 * q.shape[-1])
    return flash_attn_func(q, k, v, 0.0, scale, False)
