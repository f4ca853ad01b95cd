"""Profiling helpers."""
import torch_npu
# TODO(ascend-port): NPU107 [low] torch.cuda.nvtx.{range_pop, range_push}: import mstx instead (from torch_npu.npu import mstx) and call mstx.range_push/range_pop/mark/annotate
from torch.cuda.nvtx import range_pop, range_push


def step(model, x):
    return model(x.npu())
