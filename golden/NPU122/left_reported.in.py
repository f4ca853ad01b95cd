import torch


def run(model, batch, rank):
    # a device, an index or a string: no one device-neutral spelling takes them all
    model.cuda(rank)
    # keyword arguments: torch.accelerator's are positional-only
    torch.cuda.synchronize(device=rank)
    # no torch.accelerator counterpart
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = model(batch)
    torch.cuda.manual_seed(0)
    return out
