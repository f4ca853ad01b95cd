import torch_npu
import torch.npu as tc
from torch import npu

g = tc.NPUGraph()
with tc.graph(g):
    pass
h = npu.NPUGraph()
