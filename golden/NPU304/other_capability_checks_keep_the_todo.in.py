import torch


def fp8_ok():
    return torch.cuda.get_device_capability() >= (8, 9)


def flash_ok():
    return torch.cuda.get_device_capability()[0] >= 8


def log_bf16():
    major, minor = torch.cuda.get_device_capability()
    print(f"sm_{major}{minor}")
    return major >= 8 and torch.bfloat16
