import torch
import torch_npu
import torch._dynamo

model = torch.nn.Linear(4, 4).npu()
# TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
model = torch.compile(model)
# TODO(ascend-port): NPU707 [low] torch._dynamo.optimize of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
head = torch._dynamo.optimize("inductor")(model)
off = torch.compile(model, disable=not args.compile)
accelerator.backward(model(x).sum())
