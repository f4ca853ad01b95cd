import torch
import torch.cuda.amp as amp
import torch.cuda.amp as cuda_amp
import torch.cuda as tc

scaler = amp.GradScaler()
with cuda_amp.autocast():
    tc.synchronize()
