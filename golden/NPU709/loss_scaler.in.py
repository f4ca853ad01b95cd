# torch_npu's GradScaler.step passes grad_scaler=self to a fused torch optimizer, whose step() takes no such
# argument: a module that scales its loss is left.
import torch

model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.cuda.amp.GradScaler()
