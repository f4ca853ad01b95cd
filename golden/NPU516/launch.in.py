import torch
import triton

NUM_SMS = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())["multiprocessor_count"]


def grid(n_tiles: int, device: int) -> tuple[int]:
    return (min(n_tiles, triton.runtime.driver.active.utils.get_device_properties(device)["multiprocessor_count"]),)
