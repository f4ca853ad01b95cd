import torch
import torch_npu


def run(model, x):
    with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof:
        model(x)
    # TODO(ascend-port): NPU705 [low] torch_npu.profiler.profile has no key_averages(): read the results from its trace (on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(dir), MindStudio Insight)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
