import torch
import xformers.ops as xops


class Attention(torch.nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, q, k, v, causal=False):
        if causal:
            return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask(), p=self.p)
        return xops.memory_efficient_attention(q, k, v, p=self.p)


def decoder_step(q, k, v):
    return xops.memory_efficient_attention(q, k, v, xops.fmha.attn_bias.LowerTriangularFromBottomRightMask(), 0.0, 0.125)
