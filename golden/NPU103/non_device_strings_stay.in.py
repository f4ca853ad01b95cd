import torch

name = "cuda"
kernel_dir = "csrc/cuda"
msg = "cuda:0 is busy"
x = torch.zeros(3).to(torch.float16)
label = torch.device
print("cuda")
