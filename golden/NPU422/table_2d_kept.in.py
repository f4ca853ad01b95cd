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


def apply_rotary_unsqueezed_once(q, cos, sin):
    # (seq, dim) tables unsqueezed once: 3-D, which broadcasts here but npu_rotary_mul rejects
    cos = cos.unsqueeze(0)
    sin = sin.unsqueeze(0)
    return (q * cos) + (rotate_half(q) * sin)


def apply_rotary_unsqueezed_after(q, cos, sin, unsqueeze_dim=1):
    out = (q * cos) + (rotate_half(q) * sin)
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return out, cos, sin
