import torch
from apex.optimizers import FusedAdam


# bf16 parameters: apex keeps their Adam moments in fp32, torch.optim in bf16. Left with a TODO.
def build(model, lr):
    model = model.to(dtype=torch.bfloat16)
    return FusedAdam(model.parameters(), lr=lr)
