import torch
import torch_npu
import triton

NUM_SMS = triton.runtime.driver.active.utils.get_device_properties(torch.npu.current_device()).get("multiprocessor_count") or triton.runtime.driver.active.utils.get_device_properties(torch.npu.current_device())["num_vectorcore"]


def grid(n_tiles: int, device: int) -> tuple[int]:
    return (min(n_tiles, (triton.runtime.driver.active.utils.get_device_properties(device).get("multiprocessor_count") or triton.runtime.driver.active.utils.get_device_properties(device)["num_vectorcore"])),)
