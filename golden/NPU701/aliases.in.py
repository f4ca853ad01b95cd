import torch.cuda as tc
from torch import cuda

g = tc.CUDAGraph()
with tc.graph(g):
    pass
h = cuda.CUDAGraph()
