# float64 parameters: the NPU kernels' support of them is not known, so a module that names float64 is left.
import torch
import torch_npu

# TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
model = torch.nn.Linear(4, 4).double().npu()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
