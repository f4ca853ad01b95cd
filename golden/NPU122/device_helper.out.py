import torch


def get_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if hasattr(torch, "npu") and torch.npu.is_available():
        return torch.device("npu")
    return torch.device("cpu")


def evaluate(model, batch):
    model = model.to(get_device())
    return model(batch.to(get_device())), torch.zeros(2, device=get_device())


def on_rank(model, rank):
    # an index beside it: the helper's torch.device would take none
    return model.to(torch.device("cuda", rank))
