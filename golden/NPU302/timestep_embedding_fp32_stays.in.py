# A timestep embedding already in float32 (DiT's), NumPy's float64 in a sin-cos table, float64 on the CPU outside
# any embedding: nothing to change.
import math

import numpy as np
import torch


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(t.device)
    args = t[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if t.dtype == torch.float64:  # (a comparison stays)
        embedding = embedding.to(t.dtype)
    return embedding


def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float64) / (embed_dim / 2.0)
    return np.einsum("m,d->md", pos.reshape(-1), 1.0 / 10000**omega)


def schedule(n):
    return torch.linspace(0.0, 1.0, n, dtype=torch.float64)
