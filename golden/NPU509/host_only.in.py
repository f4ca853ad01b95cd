import torch
import triton.language as tl


def offsets(stride, t: torch.Tensor):
    return stride.to(tl.int64), t.to(torch.int64)
