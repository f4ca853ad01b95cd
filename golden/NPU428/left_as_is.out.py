import torch
import torch.nn.functional as F


def infinite_fill(scores, mask, value):
    # -inf: a fully masked row is NaN here, uniform in the op (an NPU431 note)
    scores = scores.masked_fill(mask, float("-inf"))
    return F.softmax(scores, dim=-1) @ value


def scale_after_mask(scores, mask, value, scale):
    # scaled after the mask: not the softmax of masked scores
    probs = F.softmax(scores.masked_fill(mask, -10000.0) * scale, dim=-1)
    return probs @ value


def reshaped_mask(scores, mask, value):
    # a mask reshaped in place (an NPU431 note: the test could read its shape only by computing it again)
    scores = scores.masked_fill(mask.unsqueeze(1), -10000.0)
    return F.softmax(scores, dim=-1) @ value


def other_axis(scores, mask, value):
    scores = scores.masked_fill(mask, -10000.0)
    return F.softmax(scores, dim=-2) @ value


def float_mask(scores, mask, value):
    # an additive mask, not a boolean one
    return F.softmax(scores + mask * -10000.0, dim=-1) @ value


def small_fill(scores, mask, value):
    # -100 is no mask's fill
    # TODO(ascend-port): NPU429 [low] attention left unfused (torch_npu.npu_fusion_attention): masked_fill with -100.0 (not -inf or the lowest value): not a mask
    scores = scores.masked_fill(mask, -100.0)
    return F.softmax(scores, dim=-1) @ value
