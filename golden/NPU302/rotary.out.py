import torch
import torch_npu
from torch import nn


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float64)[: dim // 2] / dim)
    t = torch.arange(end, device=freqs.device, dtype=torch.double)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs).to(torch.complex64)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).double() / dim))
        self.register_buffer("inv_freq", inv_freq.float(), persistent=False)

    def forward(self, x, positions):
        if x.dtype == torch.float64:
            raise ValueError("float64 input")
        freqs = torch.einsum("i,j->ij", positions.to(torch.float32), self.inv_freq)
        return freqs.cos(), freqs.sin()


def build(dim, device):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    return inv_freq
