import torch
import torch_npu
import triton


def persistent_grid(n_tiles: int, device: torch.device) -> tuple[int]:
    return (min(n_tiles, (getattr(torch.npu.get_device_properties(device), "multi_processor_count", None) or torch.npu.get_device_properties(device).vector_core_num)),)


def launch_config(x: torch.Tensor) -> tuple[int, int]:
    props = torch.npu.get_device_properties(x.device)
    num_sms = getattr(props, "multi_processor_count", None) or props.vector_core_num
    return num_sms, props.total_memory
