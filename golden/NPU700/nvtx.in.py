import torch
import torch.cuda.nvtx as nv
from torch.cuda import nvtx


def step(model, batch, i):
    torch.cuda.nvtx.range_push("forward")
    out = model(batch)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.mark("after forward")
    with torch.cuda.nvtx.range("backward"):
        out.sum().backward()
    with nvtx.range("step {}", i):
        pass
    rid = nv.range_start("optimizer")
    nv.range_end(rid)
    nvtx.range_push(f"iter {i}")
    nvtx.range_pop()


@torch.cuda.nvtx.range("decorated")
def decorated():
    pass
