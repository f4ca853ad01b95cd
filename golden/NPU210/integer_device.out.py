import torch
import torch_npu
import torch.distributed as dist


def setup(rank, model, batch):
    device = rank % torch.npu.device_count()
    torch.npu.set_device(device)
    model.to(torch.device("npu", device))
    batch = batch.to(torch.device("npu", device), non_blocking=True)
    mask = torch.ones(4, device=torch.device("npu", device))
    return dist.DistributedDataParallel(model, device_ids=[device]), batch, mask


def current(x):
    gpu = torch.npu.current_device()
    return x.to(device=torch.device("npu", gpu))


# Not rewritten: `device` is also bound to "cpu" (a TODO), `n` is no device, dtype conversions.
def mixed(rank, x, use_cpu):
    device = rank % torch.npu.device_count()
    if use_cpu:
        device = "cpu"
    # TODO(ascend-port): NPU210 [medium] device may be an integer device index (current_device(), x % device_count()), which means CUDA: make that branch torch.device("npu", index)
    y = x.to(device)
    n = torch.npu.device_count()
    return y.to(torch.float16), x.to(n)
