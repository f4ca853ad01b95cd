import torch
import torch._dynamo

model = torch.nn.Linear(4, 4)
fast = torch.compile(model, backend="cudagraphs")
fast2 = torch._dynamo.optimize("cudagraphs")(model)
default = torch.compile(model)
eager = torch.compile(model, backend="aot_eager")
