import torch

from .enums import CUDA, XPU


def dtype_for(device):
    return torch.float16 if device.type == "cuda" else torch.float32 if device.type == "mps" else torch.bfloat16


def sync(kind, device):
    match device.type:
        case "cuda":
            torch.cuda.synchronize()
        case "xpu":
            torch.xpu.synchronize()


def launch(kind):
    if kind is CUDA:
        torch.cuda.synchronize()
    elif kind is XPU:
        torch.xpu.synchronize()
