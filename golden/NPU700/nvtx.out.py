import torch
import torch_npu
from torch_npu.npu import mstx as nv
from torch.npu import mstx as nvtx


def step(model, batch, i):
    torch_npu.npu.mstx.range_push("forward")
    out = model(batch)
    torch_npu.npu.mstx.range_pop()
    torch_npu.npu.mstx.mark("after forward")
    with torch_npu.npu.mstx.annotate("backward"):
        out.sum().backward()
    with nvtx.annotate("step {}".format(i)):
        pass
    rid = nv.range_start("optimizer")
    nv.range_end(rid)
    nvtx.range_push(f"iter {i}")
    nvtx.range_pop()


@torch_npu.npu.mstx.annotate("decorated")
def decorated():
    pass
