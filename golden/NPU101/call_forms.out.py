import torch
import torch_npu

model = torch.nn.Linear(2, 2).npu()
model.npu(0)
x = torch.ones(2).npu(device=1, non_blocking=True)
y = (x + 1).npu()
move = torch.Tensor.npu
