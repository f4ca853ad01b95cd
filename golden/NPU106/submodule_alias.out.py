import torch
import torch_npu
from torch.npu import amp
from torch.npu import amp as cuda_amp
import torch.npu as tc

scaler = amp.GradScaler()
with cuda_amp.autocast():
    tc.synchronize()
