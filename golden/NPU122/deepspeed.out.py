import torch
from deepspeed.accelerator import get_accelerator


def timed_step(engine, batch):
    batch = batch.to(get_accelerator().current_device_name(), non_blocking=True)
    get_accelerator().synchronize()
    loss = engine(batch)
    get_accelerator().synchronize()
    used = get_accelerator().max_memory_allocated()
    get_accelerator().empty_cache()
    return loss, used, get_accelerator().current_device()


def set_rank_device(local_rank):
    get_accelerator().set_device(local_rank)
    get_accelerator().manual_seed(1234)


def buffers(size, rank, dtype):
    grad_sum = torch.zeros(size, dtype=dtype, device=get_accelerator().device_name())
    index = torch.tensor([0, 1], device=get_accelerator().device_name(rank)).to(get_accelerator().device_name(0))
    return grad_sum, index, torch.device(get_accelerator().device_name()), torch.empty(1, device=f"cuda:{rank:02d}")
