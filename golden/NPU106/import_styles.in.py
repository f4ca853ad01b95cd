import torch.cuda as tc
from torch import cuda
from torch.cuda import amp, synchronize
from torch.cuda.amp import autocast, GradScaler
import torch as th

tc.synchronize()
cuda.empty_cache()
synchronize()
th.cuda.is_available()
with autocast():
    pass
