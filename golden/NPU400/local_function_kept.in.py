import torch


def flash_attn_func(q, k, v, causal=False):
    """A local stand-in that only shares flash-attn's name: not ported."""
    return q + k + v


def attend(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
