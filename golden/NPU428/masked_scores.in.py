import math

import torch
import torch.nn.functional as F


def deberta_attention(attention_scores, attention_mask, value):
    # DeBERTa: the dtype's minimum where the boolean mask is False
    attention_scores = attention_scores.masked_fill(~(attention_mask), torch.finfo(attention_scores.dtype).min)
    attention_probs = F.softmax(attention_scores, dim=-1)
    return attention_probs @ value


def xlm_attention(scores, mask, value):
    # XLM: in place, then a softmax in float32
    scores.masked_fill_(mask, torch.finfo(scores.dtype).min)
    weights = F.softmax(scores.float(), dim=-1).type_as(scores)
    return torch.matmul(weights, value)


def nested(scores, mask, value):
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores.masked_fill(mask, -math.inf), -1), value)


def method_form(sim, mask, v):
    sim = sim.masked_fill(mask, -1e4)
    attn = sim.softmax(dim=-1)
    return torch.matmul(attn, v)
