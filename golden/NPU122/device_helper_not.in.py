# Not a device helper the islands may go through: it needs an argument, or returns what it does not spell out.
import torch


def get_device(rank):
    if torch.cuda.is_available():
        return torch.device("cuda", rank)
    return torch.device("npu", rank)


def default_device():
    name = "npu" if hasattr(torch, "npu") else "cuda"
    return torch.device(name)


def evaluate(model, batch):
    model = model.cuda()
    return model(batch.to("cuda"))
