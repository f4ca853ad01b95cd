# torch_npu 2.8.0 has _fused_adamw_ but neither _fused_adam_ nor _fused_sgd_: only AdamW gets fused.
import torch

model = torch.nn.Linear(4, 4).cuda()
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3)
adam = torch.optim.Adam(model.parameters(), lr=1e-3)
sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
