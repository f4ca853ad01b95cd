import torch


def rotate_half(x):
    """Interleaved pairs (GPT-J style), under the HF name: not npu_rotary_mul's half mode."""
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rotary(t, cos, sin):
    return (t * cos) + (rotate_half(t) * sin)
