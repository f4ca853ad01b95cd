import math

import torch
import torch.nn.functional as F


def deberta_attention(attention_scores, attention_mask, value):
    # DeBERTa: the dtype's minimum where the boolean mask is False
    attention_scores = attention_scores.masked_fill(~(attention_mask), torch.finfo(attention_scores.dtype).min)
    # TODO(ascend-port): NPU428 [low] masked softmax: torch_npu.npu_scaled_masked_softmax(attention_scores, ~(attention_mask)) computes this in one kernel (the mask as it is: True masks); not rewritten: the op takes only scores whose last two axes are 32 to 4096 long and multiples of 32 (not known here), and fills -10000 where this code fills torch.finfo(attention_scores.dtype).min
    attention_probs = F.softmax(attention_scores, dim=-1)
    return attention_probs @ value


def xlm_attention(scores, mask, value):
    # XLM: in place, then a softmax in float32
    scores.masked_fill_(mask, torch.finfo(scores.dtype).min)
    # TODO(ascend-port): NPU428 [low] masked softmax: torch_npu.npu_scaled_masked_softmax(scores, mask) computes this in one kernel (the mask as it is: True masks); not rewritten: the op takes only scores whose last two axes are 32 to 4096 long and multiples of 32 (not known here), and fills -10000 where this code fills torch.finfo(scores.dtype).min
    weights = F.softmax(scores.float(), dim=-1).type_as(scores)
    return torch.matmul(weights, value)


def nested(scores, mask, value):
    # TODO(ascend-port): NPU428 [low] masked softmax: torch_npu.npu_scaled_masked_softmax(scores, mask) computes this in one kernel (the mask as it is: True masks); not rewritten: the op takes only scores whose last two axes are 32 to 4096 long and multiples of 32 (not known here), and fills -10000 where this code fills -math.inf; a fully masked row: NaN here, uniform there
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores.masked_fill(mask, -math.inf), -1), value)


def method_form(sim, mask, v):
    sim = sim.masked_fill(mask, -1e4)
    # TODO(ascend-port): NPU428 [low] masked softmax: torch_npu.npu_scaled_masked_softmax(sim, mask) computes this in one kernel (the mask as it is: True masks); not rewritten: the op takes only scores whose last two axes are 32 to 4096 long and multiples of 32 (not known here), and fills -10000 where this code fills -1e4
    attn = sim.softmax(dim=-1)
    return torch.matmul(attn, v)
