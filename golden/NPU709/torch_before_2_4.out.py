# torch 2.3 (torch_npu 2.3.1) has no fused kernels on the CPU: a CPU model on an NPU host would fail.
import torch
import torch_npu

model = torch.nn.Linear(4, 4).npu()
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3)
adam = torch.optim.Adam(model.parameters(), lr=1e-3)
sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
