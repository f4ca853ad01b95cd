import torch
import torch.nn.functional as F


def causal(scores, causal_mask, value):
    # -inf: a fully masked row is NaN here, uniform in the op
    scores = scores.masked_fill(causal_mask, float("-inf"))
    return F.softmax(scores, dim=-1) @ value


def unsqueezed(score, mask, value):
    # a mask reshaped where it is used: its shape is not the name's
    score = score.masked_fill(~mask[None], -10000.0)
    return torch.matmul(F.softmax(score, dim=-1), value)
