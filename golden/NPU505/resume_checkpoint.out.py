import torch
try:
    # TODO(ascend-port): NPU506 [low] apex FusedSGD: use torch.optim.SGD
    from apex.optimizers import FusedSGD
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    FusedSGD = None


# An apex checkpoint keeps `step` per param group: torch.optim would not load it. Left with a TODO.
def resume(model, path):
    # TODO(ascend-port): NPU506 [low] apex FusedSGD: use torch.optim.SGD, by hand: the module loads an optimizer state_dict: apex checkpoints keep `step` per param group, torch.optim per parameter (KeyError 'step'): convert the checkpoint or start the optimizer afresh
    optimizer = FusedSGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.load_state_dict(torch.load(path)["optimizer"])
    return optimizer
