import torch
from deepspeed.accelerator import get_accelerator


def timed_step(engine, batch):
    batch = batch.cuda(non_blocking=True)
    torch.cuda.synchronize()
    loss = engine(batch)
    torch.cuda.synchronize()
    used = torch.cuda.max_memory_allocated()
    torch.cuda.empty_cache()
    return loss, used, torch.cuda.current_device()


def set_rank_device(local_rank):
    torch.cuda.set_device(local_rank)
    torch.cuda.manual_seed(1234)


def buffers(size, rank, dtype):
    grad_sum = torch.zeros(size, dtype=dtype, device="cuda")
    index = torch.tensor([0, 1], device=f"cuda:{rank}").to("cuda:0")
    return grad_sum, index, torch.device("cuda"), torch.empty(1, device=f"cuda:{rank:02d}")
