import torch
import torch_npu
from torch.npu import NPUGraph, graph_pool_handle, synchronize


def capture(model, static_x):
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    with torch.npu.graph(g, pool=torch.npu.graph_pool_handle()):
        static_y = model(static_x)
    g2 = NPUGraph()
    pool = graph_pool_handle()
    synchronize()
    if torch.npu.is_current_stream_capturing():
        pass
    return g, g2, static_y, pool


def graphed(model, sample):
    return torch.npu.make_graphed_callables(model, (sample,))
