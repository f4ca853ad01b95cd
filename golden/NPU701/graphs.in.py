import torch
from torch.cuda import CUDAGraph, graph_pool_handle, synchronize


def capture(model, static_x):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.graph(g, pool=torch.cuda.graph_pool_handle()):
        static_y = model(static_x)
    g2 = CUDAGraph()
    pool = graph_pool_handle()
    synchronize()
    if torch.cuda.is_current_stream_capturing():
        pass
    return g, g2, static_y, pool


def graphed(model, sample):
    return torch.cuda.make_graphed_callables(model, (sample,))
