import torch
from transformers.utils import is_torch_npu_available


def pick_device():
    if torch.cuda.is_available():
        return "cuda"
    elif is_torch_npu_available():
        return "npu"
    elif torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def synchronize(device_type):
    if device_type == "npu":
        torch.npu.synchronize()
    elif device_type == "cuda":
        torch.cuda.synchronize()


EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "npu": torch.npu.empty_cache, "cpu": None}


def _hpu_setup():
    torch.cuda.set_device(0)  # a vendor shim that mimics torch.cuda: theirs, not ours


class MPSBackend:
    name = "cuda"

    def sync(self):
        torch.cuda.synchronize()


def free_mps():
    if torch.backends.mps.is_available():
        torch.mps.empty_cache()
