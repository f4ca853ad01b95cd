import torch
import torch_npu
from torch.npu import mstx as nvtx


def train_step(model, batch):
    torch_npu.npu.mstx.range_push("forward")
    loss = model(batch)
    nvtx.range_pop()
    with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]):
        torch.npu.reset_peak_memory_stats()
        peak = torch.npu.max_memory_allocated()
    with torch.npu.stream(torch.npu.Stream()):
        torch.npu.empty_cache()
    return loss, peak
