# A helper that returns the capability, compared to choose bf16: the comparison asks the NPU for bf16 (a None
# capability would raise TypeError at start); the helper keeps NPU108's TODO for its other callers.
import torch


def capability():
    return torch.cuda.get_device_capability()


def sm_major():
    """The major compute capability."""
    return torch.cuda.get_device_capability()[0]


def choose():
    if torch.cuda.is_available():
        dtype = torch.bfloat16 if capability() >= (8, 0) else torch.float16
    else:
        dtype = torch.float32
    return dtype


def use_bf16():
    return sm_major() >= 8


def arch():
    return capability()
