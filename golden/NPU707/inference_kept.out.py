# No backward() in the module: no NPU707 TODO (NPU710 gives the call TorchAir's backend on the NPU).
import torch

model = torch.compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
with torch.inference_mode():
    images = pipe(prompt)
