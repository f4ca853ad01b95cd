import torch


def check_fp8(args):
    # an assert is a requirement, not a switch: it keeps NPU108's TODO
    assert torch.cuda.get_device_capability() >= (8, 9), "FP8 needs Ada or newer"
    return args


def fp8_unsupported():
    # the test is the other way round (old GPUs): no NPU112
    return torch.cuda.get_device_capability()[0] < 9


def pick_kernel():
    # no CUDA-only feature named: no NPU112
    return "fast" if torch.cuda.get_device_capability()[0] >= 9 else "slow"


def log_and_gate():
    major, minor = torch.cuda.get_device_capability()
    print(f"running on sm_{major}{minor}")  # a use that is not a gate: the probe stays
    return major >= 9 and "fp8"
