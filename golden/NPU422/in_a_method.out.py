import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def other(self, x):
        return self.proj(x)

    def rotate(self, q, cos, sin, position_ids):
        # (seq, dim) caches gathered by (batch, seq) position ids, then a head axis: 4-D
        cos = cos[position_ids].unsqueeze(1)
        sin = sin[position_ids].unsqueeze(1)
        # the factors the other way round
        return torch_npu.npu_rotary_mul(q, cos, sin) if q.device.type == "npu" else (cos * q) + (sin * rotate_half(q))

    def kept(self, q, cos, sin):
        # a (seq, dim) table used as it is: npu_rotary_mul takes 4-D tensors only
        return (q * cos) + (rotate_half(q) * sin)
