import torch
from torch.cuda import nvtx


def train_step(model, batch):
    torch.cuda.nvtx.range_push("forward")
    loss = model(batch)
    nvtx.range_pop()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        torch.cuda.reset_peak_memory_stats()
        peak = torch.cuda.max_memory_allocated()
    with torch.cuda.stream(torch.cuda.Stream()):
        torch.cuda.empty_cache()
    return loss, peak
