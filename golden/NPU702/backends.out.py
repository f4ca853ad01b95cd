import torch
import torch_npu
import torch._dynamo

model = torch.nn.Linear(4, 4)
fast = torch.compile(model, backend="npugraphs")
fast2 = torch._dynamo.optimize("npugraphs")(model)
default = torch.compile(model)
eager = torch.compile(model, backend="aot_eager")
