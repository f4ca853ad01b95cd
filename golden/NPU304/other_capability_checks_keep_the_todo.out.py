import torch
import torch_npu


def fp8_ok():
    return False


def flash_ok():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    return torch.cuda.get_device_capability()[0] >= 8


def log_bf16():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    major, minor = torch.cuda.get_device_capability()
    print(f"sm_{major}{minor}")
    return major >= 8 and torch.bfloat16
