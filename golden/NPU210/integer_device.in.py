import torch
import torch.distributed as dist


def setup(rank, model, batch):
    device = rank % torch.cuda.device_count()
    torch.cuda.set_device(device)
    model.to(device)
    batch = batch.to(device, non_blocking=True)
    mask = torch.ones(4, device=device)
    return dist.DistributedDataParallel(model, device_ids=[device]), batch, mask


def current(x):
    gpu = torch.cuda.current_device()
    return x.to(device=gpu)


# Not rewritten: `device` is also bound to "cpu" (a TODO), `n` is no device, dtype conversions.
def mixed(rank, x, use_cpu):
    device = rank % torch.cuda.device_count()
    if use_cpu:
        device = "cpu"
    y = x.to(device)
    n = torch.cuda.device_count()
    return y.to(torch.float16), x.to(n)
