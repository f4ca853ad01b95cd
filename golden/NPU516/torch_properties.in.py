import torch
import triton


def persistent_grid(n_tiles: int, device: torch.device) -> tuple[int]:
    return (min(n_tiles, torch.cuda.get_device_properties(device).multi_processor_count),)


def launch_config(x: torch.Tensor) -> tuple[int, int]:
    props = torch.cuda.get_device_properties(x.device)
    num_sms = props.multi_processor_count
    return num_sms, props.total_memory
