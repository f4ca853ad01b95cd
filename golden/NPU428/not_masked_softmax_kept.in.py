import torch
import torch.nn.functional as F


def other_axis(attention, mask):
    # Qwen2.5-Omni: the softmax over axis 2 of 4, not the last
    attention = attention.masked_fill(mask == 0, float("-inf"))
    return F.softmax(attention, dim=2)


def additive_mask(scores, mask):
    # a float mask added to the scores, not a boolean one
    return F.softmax(scores + mask, dim=-1)


def not_a_mask_fill(scores, mask):
    scores = scores.masked_fill(mask, 0.0)
    return F.softmax(scores, dim=-1)


def unknown_fill(scores, mask, min_value):
    scores = scores.masked_fill(mask, min_value)
    return torch.softmax(scores, dim=-1)


def with_dtype(scores, mask):
    scores = scores.masked_fill(mask, float("-inf"))
    return F.softmax(scores, dim=-1, dtype=torch.float32)


def not_adjacent(scores, mask, bias):
    scores = scores.masked_fill(mask, float("-inf"))
    scores = scores + bias
    return F.softmax(scores, dim=-1)


def top_k_sampling(values, threshold):
    # a sampler's masked logits: no matrix product, not attention scores
    values = values.masked_fill(values < threshold, -float("inf"))
    return F.softmax(values, dim=-1)
