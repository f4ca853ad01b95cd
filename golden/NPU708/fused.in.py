import torch
from torch.optim import SGD

model = torch.nn.Linear(4, 4).cuda()
adam = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
sgd = SGD(
    model.parameters(),
    lr=0.1,
    momentum=0.9,
    fused=True,
)
maybe = torch.optim.Adam(model.parameters(), fused=args.fused)
# AdamW's _fused_adamw_ is in every torch-npu release; fused=False and None need no kernel.
adamw = torch.optim.AdamW(model.parameters(), fused=True)
plain = torch.optim.Adam(model.parameters(), fused=False)
