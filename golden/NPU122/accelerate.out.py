import torch
from accelerate import Accelerator, PartialState


def evaluate(model, loader):
    model = model.to(PartialState().device)
    for batch in loader:
        out = model(batch.to(PartialState().device))
    return out, torch.zeros(4, device=PartialState().device), torch.device(PartialState().device)


def train(model, loader):
    accelerator = Accelerator()
    model = model.to(accelerator.device)
    for batch in loader:
        loss = model(batch.to(accelerator.device, non_blocking=True))
        accelerator.backward(loss)
    # an index: accelerate's device has none to take it
    return model.to("cuda:1")


def place(model, accelerator):
    if accelerator.distributed_type == "MULTI_GPU":
        return model.cuda()
    return model.to(accelerator.device)
