import math

import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn.functional as F


def _npu_masked_softmax_fits(scores, mask):
    """Whether torch_npu.npu_scaled_masked_softmax takes these scores and mask (written by ascend-port, rule
    NPU428): npu scores of a float dtype, 4-D, and a 4-D mask of their last two axes, each 32 to 4096 long
    and a multiple of 32."""
    return (
        scores.device.type == "npu"
        and scores.dtype in (torch.float16, torch.bfloat16, torch.float32)
        and scores.dim() == mask.dim() == 4
        and mask.shape[-2:] == scores.shape[-2:]
        and all(32 <= n <= 4096 and n % 32 == 0 for n in scores.shape[-2:])
    )


def deberta_attention(attention_scores, attention_mask, value):
    # DeBERTa: the dtype's minimum where the boolean mask is False
    attention_scores = attention_scores.masked_fill(~(attention_mask), torch.finfo(attention_scores.dtype).min)
    attention_probs = torch_npu.npu_scaled_masked_softmax(attention_scores, ~(attention_mask)) if _npu_masked_softmax_fits(attention_scores, attention_mask) else F.softmax(attention_scores, dim=-1)
    return attention_probs @ value


def xlm_attention(scores, mask, value):
    # XLM: in place, then a softmax in float32
    scores.masked_fill_(mask, torch.finfo(scores.dtype).min)
    weights = (torch_npu.npu_scaled_masked_softmax(scores.float(), mask) if _npu_masked_softmax_fits(scores, mask) else F.softmax(scores.float(), dim=-1)).type_as(scores)
    return torch.matmul(weights, value)


def nested(scores, mask, value):
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores.masked_fill(mask, -math.inf), -1), value)


def method_form(sim, mask, v):
    sim = sim.masked_fill(mask, -1e4)
    attn = torch_npu.npu_scaled_masked_softmax(sim, mask) if _npu_masked_softmax_fits(sim, mask) else sim.softmax(dim=-1)
    return torch.matmul(attn, v)
