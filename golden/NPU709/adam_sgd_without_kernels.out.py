# torch_npu 2.8.0 has _fused_adamw_ but neither _fused_adam_ nor _fused_sgd_: only AdamW gets fused.
import torch
import torch_npu

model = torch.nn.Linear(4, 4).npu()
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
adam = torch.optim.Adam(model.parameters(), lr=1e-3)
sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
