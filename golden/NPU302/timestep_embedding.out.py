# Sinusoidal timestep embeddings are built like rotary tables, from the device's timesteps: their double precision
# (Wan's sinusoidal_embedding_1d, a float64 get_timestep_embedding) is lowered to float32, the dtype diffusers'
# get_timestep_embedding computes in (the NPU has no float64 compute).
import math

import torch
import torch_npu


def sinusoidal_embedding_1d(dim, position):
    assert dim % 2 == 0
    half = dim // 2
    position = position.type(torch.float32)
    sinusoid = torch.outer(position, torch.pow(10000, -torch.arange(half).to(position).div(half)))
    return torch.cat([torch.cos(sinusoid), torch.sin(sinusoid)], dim=1)


def get_timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    exponent = -math.log(max_period) * torch.arange(half, dtype=torch.float32, device=timesteps.device) / half
    emb = timesteps.float()[:, None] * torch.exp(exponent)[None, :]
    return torch.cat([torch.cos(emb), torch.sin(emb)], dim=-1).float()


class Timesteps(torch.nn.Module):
    def forward(self, timesteps):
        return get_timestep_embedding(timesteps, 256)


def loss_scale(x):
    # not an embedding: NPU303's TODO, unchanged
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    return x.double().npu().mean()
