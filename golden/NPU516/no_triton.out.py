import torch


def persistent_grid(n_tiles: int, device: int) -> tuple[int]:
    # no triton here: NPU108's TODO, not NPU516's rewrite
    # TODO(ascend-port): NPU108 [low] NPU device properties have no .multi_processor_count (only name, total_memory, L2_cache_size, cube_core_num, vector_core_num), so the call stays on torch.cuda: test the feature instead
    return (min(n_tiles, torch.cuda.get_device_properties(device).multi_processor_count),)
