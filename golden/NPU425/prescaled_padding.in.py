"""q scaled before the product, GQA by repeat_interleave, a (B, 1, 1, S) padding mask filled with the dtype's lowest
value (broadcast to B1SS for the op), the result returned directly."""

import torch


def attend(q, k, v, keep, head_dim: int):
    q = q * head_dim**-0.5
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = torch.repeat_interleave(v, q.shape[1] // v.shape[1], dim=1)
    scores = torch.matmul(q, k.transpose(2, 3))
    scores = scores.masked_fill(~keep[:, None, None, :], torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores.float(), dim=-1).type_as(q)
    return torch.matmul(probs, v)
