import torch
from torch import nn

IS_NVIDIA = torch.version.cuda is not None
IS_NVIDIA_HOPPER = IS_NVIDIA and ("NVIDIA H" in torch.cuda.get_device_name(0) or torch.cuda.get_device_capability()[0] >= 9)
IS_TF32_SUPPORTED = IS_NVIDIA and torch.cuda.get_device_capability(0)[0] >= 8


def supports_tma():
    return IS_NVIDIA and torch.cuda.get_device_capability()[0] >= 9


def is_sm100() -> bool:
    return torch.cuda.get_device_capability()[0] >= 10


def has_fp8_kernel(use_kernels):
    return use_kernels and (torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9))


def setup_matmul():
    if torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True


class Attention(nn.Module):
    def __init__(self, use_flash_attn=False):
        super().__init__()
        self.cpu_config = (True, True, True)
        self.cuda_config = None
        if not torch.cuda.is_available() or not use_flash_attn:
            return

        device_properties = torch.cuda.get_device_properties(torch.device("cuda"))

        if device_properties.major == 8 and device_properties.minor == 0:
            print("A100 GPU detected, using flash attention if input tensor is on cuda")
            self.cuda_config = (True, False, False)
        else:
            self.cuda_config = (False, True, True)


def pick_gemm():
    # Hopper and newer run the FP8 grouped GEMM
    major, minor = torch.cuda.get_device_capability()
    if major >= 9:
        return "fp8_grouped_gemm"
    return "fp16_gemm"
