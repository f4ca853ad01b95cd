import torch
import torch_npu
from torch.optim import SGD

model = torch.nn.Linear(4, 4).npu()
adam = torch.optim.Adam(model.parameters(), lr=1e-3, fused=None if hasattr(torch, "npu") and torch.npu.is_available() else True)
sgd = SGD(
    model.parameters(),
    lr=0.1,
    momentum=0.9,
    fused=None if hasattr(torch, "npu") and torch.npu.is_available() else True,
)
# TODO(ascend-port): NPU708 [medium] torch.optim.Adam(fused=args.fused): torch_npu 2.8.0.post5 has no _fused_adam_ kernel, so a true value fails at the first step on the NPU: pass fused=None there (torch picks foreach)
maybe = torch.optim.Adam(model.parameters(), fused=args.fused)
# AdamW's _fused_adamw_ is in every torch-npu release; fused=False and None need no kernel.
adamw = torch.optim.AdamW(model.parameters(), fused=True)
plain = torch.optim.Adam(model.parameters(), fused=False)
