"""A mask multiplied in (not added) and a fill with 0 (not -inf): not what the op's atten_mask does."""

import torch
import torch.nn.functional as F


def multiplied_mask(q, k, v, mask):
    # TODO(ascend-port): NPU429 [low] attention left unfused (torch_npu.npu_fusion_attention): `q @ k.transpose(-2, -1) * mask` is not part of attention
    w = torch.softmax((q @ k.transpose(-2, -1)) * mask, dim=-1)
    return w @ v


def zero_fill(q, k, v, mask):
    # TODO(ascend-port): NPU429 [low] attention left unfused (torch_npu.npu_fusion_attention): masked_fill with 0.0 (not -inf or the lowest value): not a mask
    s = (q @ k.transpose(-2, -1)).masked_fill(mask, 0.0)
    return F.softmax(s, dim=-1) @ v
