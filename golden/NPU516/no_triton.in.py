import torch


def persistent_grid(n_tiles: int, device: int) -> tuple[int]:
    # no triton here: NPU108's TODO, not NPU516's rewrite
    return (min(n_tiles, torch.cuda.get_device_properties(device).multi_processor_count),)
