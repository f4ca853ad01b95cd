import flash_attn
import torch


def attend(q, k, v, causal=True):
    return flash_attn.flash_attn_func(q, k, v, causal=causal)
