# A loop over the CUDA devices that reads what only CUDA's properties have: the probe stays CUDA's, and so does the
# count that bounds the loop (ported alone, it would run the loop on an NPU host, and the probe raise).
import torch


def gpu_info():
    info = {}
    num_gpus = torch.cuda.device_count()
    for gpu in range(num_gpus):
        props = torch.cuda.get_device_properties(gpu)
        info[gpu] = (props.name, props.total_memory, f"{props.major}.{props.minor}")
    return info


def capabilities():
    majors = []
    for i in range(torch.cuda.device_count()):
        majors.append(torch.cuda.get_device_properties(i).major)
    return majors


def names():
    return [torch.cuda.get_device_properties(i).name for i in range(torch.cuda.device_count())]
