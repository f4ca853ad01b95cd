"""nanoGPT: causal by a tril buffer and masked_fill(-inf), scale 1/sqrt(d), functional dropout, q and k of a rank
the code does not show (transpose(-2, -1)): the port also tests q.dim() == 4."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, block_size, dropout=0.0):
        super().__init__()
        self.dropout = dropout
        bias = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)
        self.register_buffer("bias", bias)

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, p=self.dropout, training=self.training)
        y = att @ v
        return y.transpose(1, 2)
