import torch
from accelerate import Accelerator, PartialState


def evaluate(model, loader):
    model = model.cuda()
    for batch in loader:
        out = model(batch.to("cuda"))
    return out, torch.zeros(4, device="cuda"), torch.device("cuda")


def train(model, loader):
    accelerator = Accelerator()
    model = model.cuda()
    for batch in loader:
        loss = model(batch.to("cuda", non_blocking=True))
        accelerator.backward(loss)
    # an index: accelerate's device has none to take it
    return model.to("cuda:1")


def place(model, accelerator):
    if accelerator.distributed_type == "MULTI_GPU":
        return model.cuda()
    return model.to(accelerator.device)
