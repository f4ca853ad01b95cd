import torch
# TODO(ascend-port): NPU107 [low] torch.cuda.nvtx.{range_pop, range_push}: import mstx instead (from torch_npu.npu import mstx) and call mstx.range_push/range_pop/mark/annotate
from torch.cuda.nvtx import range_pop, range_push


def step():
    range_push("step")
    range_pop()
    # TODO(ascend-port): NPU107 [low] torch.cuda.nvtx.some_private_helper has no torch_npu.npu.mstx counterpart: port by hand
    torch.cuda.nvtx.some_private_helper()
