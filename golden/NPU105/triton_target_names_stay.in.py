# Triton's target names are not torch devices: "cuda" here is what Triton's NVIDIA backend calls itself
# (Triton-Ascend's is "npu"), so none of these comparisons may change.
import functools

import torch
import triton


@functools.lru_cache(maxsize=None)
def get_available_device() -> str:
    try:
        return triton.runtime.driver.active.get_current_target().backend
    except Exception:
        return "cuda"


def _check_platform() -> str:
    device = get_available_device()
    if device == "cuda":
        return "nvidia"
    return device


device = get_available_device() if get_available_device() != "hip" else "cuda"
device_torch_lib = getattr(torch, device)
device_platform = get_available_device()

IS_AMD = (device_platform == "hip")
IS_NVIDIA = (device_platform == "cuda")
IS_PLATFORM_CUDA = device_platform in ("cuda", "musa")


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def is_cuda_target():
    target = triton.runtime.driver.active.get_current_target()
    return target.backend == "cuda" and target.arch >= 80
