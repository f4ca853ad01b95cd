import torch

model = torch.nn.Linear(2, 2).cuda()
model.cuda(0)
x = torch.ones(2).cuda(device=1, non_blocking=True)
y = (x + 1).cuda()
move = torch.Tensor.cuda
