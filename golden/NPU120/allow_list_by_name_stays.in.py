import torch


def setup(device):
    # a branch that names a device itself does that device's work
    if device in ["cuda", "mps"]:
        torch.cuda.synchronize(device)
    # a branch that does not read the value sets something for the listed devices alone
    if device in ("cuda", "xpu"):
        pin_memory = True
    else:
        pin_memory = False
    # the check that rejects a value is widened only on the way to an NPU branch
    if device not in ["cuda", "mps"]:
        raise ValueError(device)
    return pin_memory
