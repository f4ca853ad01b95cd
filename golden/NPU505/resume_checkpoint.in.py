import torch
from apex.optimizers import FusedSGD


# An apex checkpoint keeps `step` per param group: torch.optim would not load it. Left with a TODO.
def resume(model, path):
    optimizer = FusedSGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.load_state_dict(torch.load(path)["optimizer"])
    return optimizer
