import torch
from apex.optimizers import FusedAdam


# bf16 only inside autocast: the parameters stay fp32, so the optimizer is ported.
def train(model, batches):
    opt = FusedAdam(model.parameters(), lr=1e-4, weight_decay=0.05)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
