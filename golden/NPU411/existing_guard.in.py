import torch

try:
    from flash_attn.layers.rotary import apply_rotary_emb
except ImportError:
    apply_rotary_emb = None


def rotate(x, cos, sin):
    if apply_rotary_emb is None:
        return x
    return apply_rotary_emb(x, cos, sin)
