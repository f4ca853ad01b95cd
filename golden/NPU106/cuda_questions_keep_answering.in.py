# Functions whose name asks about CUDA answer for CUDA: on an NPU host they must say "no", not "yes".
import contextlib
import os

import torch


@contextlib.contextmanager
def patch_environment(**kwargs):
    old = {key: os.environ.get(key) for key in kwargs}
    os.environ.update(kwargs)
    yield
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def is_cuda_available():
    """Checks CUDA through NVML, without initialising the driver."""
    with patch_environment(PYTORCH_NVML_BASED_CUDA_CHECK="1"):
        available = torch.cuda.is_available()
    return available


def is_torch_cuda_available() -> bool:
    return torch.cuda.is_available()


def has_cuda():
    return torch.cuda.is_available() and torch.cuda.device_count() > 0


def get_torch_cuda_device_capability():
    if torch.cuda.is_available():
        device = torch.device("cuda")
        compute_capability = torch.cuda.get_device_capability(device)
        compute_capability = f"{compute_capability[0]}.{compute_capability[1]}"
        return float(compute_capability)
    return None
