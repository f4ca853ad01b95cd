import torch
import torch._dynamo

model = torch.nn.Linear(4, 4).cuda()
model = torch.compile(model)
head = torch._dynamo.optimize("inductor")(model)
off = torch.compile(model, disable=not args.compile)
accelerator.backward(model(x).sum())
