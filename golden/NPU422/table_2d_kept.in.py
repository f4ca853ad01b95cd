import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_to_patches(q, cos, sin):
    # cos, sin: (patches, head_dim), broadcast as they are: npu_rotary_mul takes 4-D tables only
    return (q * cos) + (rotate_half(q) * sin)


def apply_rotary_unsqueezed_elsewhere(q, cos, sin, flag):
    cos = cos.unsqueeze(1)
    if flag:
        cos = cos[0]
    return (q * cos) + (rotate_half(q) * sin)
