import os

import torch
from torch import nn

# module level: the unpacked capability is read by a function further down
major, minor = torch.cuda.get_device_capability()
total_memory = torch.cuda.get_device_properties(0).total_memory
print("capability:", torch.cuda.get_device_capability())

can_use_cuda_kernels = (
    os.getenv("USE_CUDA_KERNELS", "0") == "1"
    and torch.cuda.is_available()
    and torch.cuda.get_device_capability()[0] >= 7
)


def tf32_available():
    if not torch.cuda.is_available() or torch.version.cuda is None:
        return False
    if torch.cuda.get_device_properties(torch.cuda.current_device()).major < 8:
        return False
    return True


def arch_flags():
    return f"sm_{major}{minor}"


class Attend(nn.Module):
    def __init__(self, flash=False):
        super().__init__()
        self.cuda_config = None
        if not torch.cuda.is_available() or not flash:
            return
        device_properties = torch.cuda.get_device_properties(torch.device("cuda"))
        if device_properties.major == 8 and device_properties.minor == 0:
            self.cuda_config = (True, False, False)
        else:
            self.cuda_config = (False, True, True)


class Runner:
    def __init__(self):
        self.props = torch.cuda.get_device_properties(0)
        self.device = torch.device("cuda")

    def wide(self):
        return self.props.multi_processor_count > 100


def packed_attention(q, device):
    assert device.type == "cuda", "packed sequences need a CUDA device"
    major, minor = torch.cuda.get_device_capability(device)
    assert major >= 8, f"needs SM80+, found SM{major}{minor}"
    return q


def sparse_attention(query):
    if query.device.type != "cuda" or torch.cuda.get_device_capability(query.device)[0] != 10:
        raise RuntimeError("block-sparse attention needs an SM100 device")
    return query


def check_kernel():
    if not torch.cuda.is_available():
        return "the kernel requires CUDA"
    arch = torch.cuda.get_device_capability()[0]
    if arch < 9:
        return f"the kernel requires SM90 or newer, found SM{arch}0"
    return None


def load_quantized():
    device_capability = torch.cuda.get_device_capability()
    if device_capability[0] == 7:
        raise ValueError("not supported on Volta")
    return torch.zeros(2, device="cuda")
