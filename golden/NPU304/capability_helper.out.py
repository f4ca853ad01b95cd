# A helper that returns the capability, compared to choose bf16: the comparison asks the NPU for bf16 (a None
# capability would raise TypeError at start); the helper keeps NPU108's TODO for its other callers.
import torch
import torch_npu


def capability():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
    return torch.npu.get_device_capability()


def sm_major():
    """The major compute capability."""
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    return torch.cuda.get_device_capability()[0]


def choose():
    if torch.npu.is_available():
        dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16
    else:
        dtype = torch.float32
    return dtype


def use_bf16():
    return torch.npu.is_bf16_supported()


def arch():
    return capability()
