# float64 parameters: the NPU kernels' support of them is not known, so a module that names float64 is left.
import torch

model = torch.nn.Linear(4, 4).double().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
