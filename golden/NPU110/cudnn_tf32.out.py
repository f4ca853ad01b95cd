import torch
import torch_npu

torch.npu.conv.allow_hf32 = False
torch.backends.cudnn.benchmark = True
