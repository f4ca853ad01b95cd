import torch


def run(model, x):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        model(x)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
