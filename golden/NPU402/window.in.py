import torch
from flash_attn import flash_attn_func, flash_attn_varlen_func


class SlidingWindowAttention(torch.nn.Module):
    def __init__(self, window: int):
        super().__init__()
        self.window = window

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=(self.window, 0))


def local_attention(q, k, v, left, right):
    return flash_attn_func(q, k, v, window_size=(left, right))


def local_varlen(q, k, v, cu_q, cu_k, max_q, max_k):
    return flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True, window_size=(2, 2))


def no_window(q, k, v):
    return flash_attn_func(q, k, v, window_size=(-1, -1))
