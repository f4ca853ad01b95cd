import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.profiler import record_function


def run(model, x):
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=tensorboard_trace_handler("./log"),
    ) as prof:
        with record_function("model"):
            model(x)
        prof.step()


def run2(model, x):
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
    ) as prof:
        with torch.profiler.record_function("model"):
            model(x)


def run3(model, x):
    from torch.profiler import ProfilerActivity, profile as prof_ctx, record_function
    with prof_ctx(activities=[ProfilerActivity.CUDA]):
        with record_function("model"):
            model(x)
    with torch.autograd.profiler.profile(use_cuda=True):
        model(x)
