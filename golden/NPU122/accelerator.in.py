import os

import torch


def setup():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    print("devices:", torch.cuda.device_count(), "current:", torch.cuda.current_device())


def evaluate(model, loader):
    model = model.cuda()
    for batch in loader:
        out = model(batch.cuda(non_blocking=True))
        torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return out
