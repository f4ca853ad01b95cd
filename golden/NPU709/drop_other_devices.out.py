import torch
import torch_npu
from torch import optim
from torch.optim import SGD, AdamW

model = torch.nn.Linear(4, 4).npu()
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)
adam = optim.Adam(
    model.parameters(),
    lr=1e-3,
    betas=(0.9, 0.95),
    fused=True,
)
sgd = SGD(model.parameters(), 0.1, 0.9, nesterov=True, fused=True)
# --other-devices drop: fused=True for every device.
plain = AdamW(model.parameters(), 3e-4, (0.9, 0.999), 1e-8, 0.01, False, maximize=False, fused=True)


