import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rotary(q, k, cos, sin):
    # q, k: (batch, seq, heads, head_dim); cos, sin: (seq, head_dim)
    cos = cos[None, :, None, :].to(q.dtype)
    sin = sin[None, :, None, :].to(q.dtype)
    return (torch_npu.npu_rotary_mul(q, cos, sin) if q.device.type == "npu" else q * cos + rotate_half(q) * sin), (torch_npu.npu_rotary_mul(k, cos, sin) if k.device.type == "npu" else k * cos + rotate_half(k) * sin)
