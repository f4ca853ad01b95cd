# Without `import torch` the run-time choice has no name to ask torch.npu through: left (--other-devices drop
# would pass fused=True, which needs none).
from torch import nn
from torch.optim import AdamW

model = nn.Linear(4, 4).cuda()
optimizer = AdamW(model.parameters(), lr=1e-3)
