import torch
import torch_npu

torch.npu.matmul.allow_hf32 = True
was = torch.npu.matmul.allow_hf32
