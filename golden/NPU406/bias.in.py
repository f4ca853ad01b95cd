import torch
from xformers.ops import memory_efficient_attention
from xformers.ops.fmha import BlockDiagonalMask


def packed(q, k, v, seqlens):
    bias = BlockDiagonalMask.from_seqlens(seqlens)
    return memory_efficient_attention(q, k, v, attn_bias=bias)


def biased(q, k, v, rel_pos):
    return memory_efficient_attention(q, k, v, rel_pos)
