import torch
import torch_npu

model = torch.nn.Linear(4, 4).npu()
# TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
fast = torch.compile(model, mode="default" if hasattr(torch, "npu") and torch.npu.is_available() else "reduce-overhead")
# TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
fast_full = torch.compile(model, fullgraph=True, mode="default" if hasattr(torch, "npu") and torch.npu.is_available() else "reduce-overhead")
opt = torch.optim.AdamW(model.parameters(), fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
for x in batches:
    loss = fast(x.npu()).pow(2).mean()
    loss.backward()
    opt.step()
