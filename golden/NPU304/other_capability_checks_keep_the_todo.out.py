import torch
import torch_npu


def fp8_ok():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
    return torch.npu.get_device_capability() >= (8, 9)


def flash_ok():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
    return torch.npu.get_device_capability()[0] >= 8


def log_bf16():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
    major, minor = torch.npu.get_device_capability()
    print(f"sm_{major}{minor}")
    return major >= 8 and torch.bfloat16
