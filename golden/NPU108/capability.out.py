import torch
import torch_npu

def use_bf16():
    return torch.npu.is_bf16_supported()

# TODO(ascend-port): NPU108 [low] NPU device properties have no .multi_processor_count (only name, total_memory, L2_cache_size, cube_core_num, vector_core_num), so the call stays on torch.cuda: test the feature instead
sms = torch.cuda.get_device_properties(0).multi_processor_count
