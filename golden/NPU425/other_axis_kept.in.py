"""Not attention as the op computes it (no finding: the evaluator cannot say what stops it): a softmax over the
queries' axis, a dropout module (not known to be one), softcapping (tanh of the scores), an output reshaped in the
statement that computes it."""

import torch
import torch.nn.functional as F


def over_queries(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1), dim=-2)
    return w @ v


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, q, k, v):
        w = self.drop(torch.softmax(q @ k.transpose(-2, -1), dim=-1))
        return w @ v


def softcapped(module, query, key, value, attention_mask, scaling, softcap=None, **kwargs):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = torch.tanh(attn_weights / softcap) * softcap
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = F.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value), attn_weights


def reshaped(q, k, v):
    w = F.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1)
    out = torch.matmul(w, v).transpose(1, 2)
    return out
