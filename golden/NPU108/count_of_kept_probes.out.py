# A loop over the CUDA devices that reads what only CUDA's properties have: the probe stays CUDA's, and so does the
# count that bounds the loop (ported alone, it would run the loop on an NPU host, and the probe raise).
import torch
import torch_npu


def gpu_info():
    info = {}
    num_gpus = torch.cuda.device_count()
    for gpu in range(num_gpus):
        # TODO(ascend-port): NPU108 [low] NPU device properties have no .major/.minor (only name, total_memory, L2_cache_size, cube_core_num, vector_core_num), so the call stays on torch.cuda: test the feature instead
        props = torch.cuda.get_device_properties(gpu)
        info[gpu] = (props.name, props.total_memory, f"{props.major}.{props.minor}")
    return info


def capabilities():
    majors = []
    for i in range(torch.cuda.device_count()):
        # TODO(ascend-port): NPU108 [low] NPU device properties have no .major (only name, total_memory, L2_cache_size, cube_core_num, vector_core_num), so the call stays on torch.cuda: test the feature instead
        majors.append(torch.cuda.get_device_properties(i).major)
    return majors


def names():
    return [torch.npu.get_device_properties(i).name for i in range(torch.npu.device_count())]
