import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn.functional as F


def attention_mask_func(attention_scores, attention_mask):
    # Megatron's: the op's own fill (no softmax here: nothing to fuse)
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


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


def glm_probs(scores, attention_mask, value_layer):
    # the fill of Megatron's attention_mask_func, inline
    probs = torch_npu.npu_scaled_masked_softmax(scores, attention_mask) if _npu_masked_softmax_fits(scores, attention_mask) else F.softmax(scores.masked_fill(attention_mask, -10000.0), dim=-1)
    return torch.matmul(probs, value_layer), probs


class Attention(torch.nn.Module):
    def forward(self, scores, v):
        # the dtype's minimum, the mask an attribute's value, softmax in float32, then cast
        scores = scores.masked_fill(self.mask, torch.finfo(scores.dtype).min)
        probs = (torch_npu.npu_scaled_masked_softmax(scores.float(), self.mask) if _npu_masked_softmax_fits(scores, self.mask) else torch.softmax(scores.float(), dim=-1)).to(v.dtype)
        return probs @ v


def padding_flags(scores, keep, value):
    # a mask computed elementwise from one tensor (keep: 1 where a key is kept): the test reads keep's shape
    scores = scores.masked_fill(keep == 0, -10000.0)
    return (torch_npu.npu_scaled_masked_softmax(scores, keep == 0) if _npu_masked_softmax_fits(scores, keep) else F.softmax(scores, dim=-1)) @ value
