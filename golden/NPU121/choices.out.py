import torch

from .enums import CUDA, XPU


def dtype_for(device):
    # TODO(ascend-port): NPU121 [low] a choice between CUDA and other devices, without the NPU: add an NPU case
    return torch.float16 if device.type == "cuda" else torch.float32 if device.type == "mps" else torch.bfloat16


def sync(kind, device):
    # TODO(ascend-port): NPU121 [low] a match between CUDA and other devices, without the NPU: add an NPU case
    match device.type:
        case "cuda":
            torch.cuda.synchronize()
        case "xpu":
            torch.xpu.synchronize()


def launch(kind):
    # TODO(ascend-port): NPU121 [low] a CUDA branch of a multi-device chain whose test or body has no NPU form: add an NPU branch beside it
    if kind is CUDA:
        torch.cuda.synchronize()
    elif kind is XPU:
        torch.xpu.synchronize()
