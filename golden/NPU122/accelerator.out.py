import os

import torch


def setup():
    torch.accelerator.set_device_index(int(os.environ["LOCAL_RANK"]))
    print("devices:", torch.accelerator.device_count(), "current:", torch.accelerator.current_device_index())


def evaluate(model, loader):
    model = model.to(torch.accelerator.current_accelerator())
    for batch in loader:
        out = model(batch.to(torch.accelerator.current_accelerator(), non_blocking=True))
        torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    return out
