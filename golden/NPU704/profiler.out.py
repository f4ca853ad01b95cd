import torch
import torch_npu
from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.profiler import record_function


def run(model, x):
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=tensorboard_trace_handler("./log"),
    ) as prof:
        with record_function("model"):
            model(x)
        prof.step()


def run2(model, x):
    with torch_npu.profiler.profile(
        activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
        schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=3),
    ) as prof:
        with torch.profiler.record_function("model"):
            model(x)


def run3(model, x):
    from torch_npu.profiler import ProfilerActivity, profile as prof_ctx
    from torch.profiler import record_function
    with prof_ctx(activities=[ProfilerActivity.NPU]):
        with record_function("model"):
            model(x)
    with torch.autograd.profiler.profile(use_cuda=True):
        model(x)
