import torch
import torch.nn.functional as F


def attention_mask_func(attention_scores, attention_mask):
    # Megatron's: the op's own fill (no softmax here: nothing to fuse)
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


def glm_probs(scores, attention_mask, value_layer):
    # the fill of Megatron's attention_mask_func, inline
    probs = F.softmax(scores.masked_fill(attention_mask, -10000.0), dim=-1)
    return torch.matmul(probs, value_layer), probs


class Attention(torch.nn.Module):
    def forward(self, scores, v):
        # the dtype's minimum, the mask an attribute's value, softmax in float32, then cast
        scores = scores.masked_fill(self.mask, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores.float(), dim=-1).to(v.dtype)
        return probs @ v


def padding_flags(scores, keep, value):
    # a mask computed elementwise from one tensor (keep: 1 where a key is kept): the test reads keep's shape
    scores = scores.masked_fill(keep == 0, -10000.0)
    return F.softmax(scores, dim=-1) @ value
