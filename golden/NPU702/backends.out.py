import torch
import torch_npu
import torch._dynamo

model = torch.nn.Linear(4, 4)
fast = torch.compile(model, backend="npugraphs")
fast2 = torch._dynamo.optimize("npugraphs")(model)
default = torch.compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
eager = torch.compile(model, backend="aot_eager")
