import torch_npu
import torch.npu as tc
from torch import npu
from torch.npu import amp, synchronize
from torch.npu.amp import autocast, GradScaler
import torch as th

tc.synchronize()
npu.empty_cache()
synchronize()
th.npu.is_available()
with autocast():
    pass
