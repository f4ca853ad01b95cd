import torch
import torch_npu

# The port changes nothing here, so it checks nothing: `ascend-port check-api` reports the missing name.
torch.npu.synchronize()
torch.npu.mstx.range_pushh("step")
