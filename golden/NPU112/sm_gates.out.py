import torch
import torch_npu
from torch import nn

IS_NVIDIA = torch.version.cuda is not None
IS_NVIDIA_HOPPER = IS_NVIDIA and ("NVIDIA H" in torch.npu.get_device_name(0) or False)
IS_TF32_SUPPORTED = IS_NVIDIA and False


def supports_tma():
    return IS_NVIDIA and False


def is_sm100() -> bool:
    return False


def has_fp8_kernel(use_kernels):
    return use_kernels and (torch.npu.is_available() and False)


def setup_matmul():
    if False:
        torch.npu.matmul.allow_hf32 = True


class Attention(nn.Module):
    def __init__(self, use_flash_attn=False):
        super().__init__()
        self.cpu_config = (True, True, True)
        self.cuda_config = None
        if not torch.npu.is_available() or not use_flash_attn:
            return

        if False:
            print("A100 GPU detected, using flash attention if input tensor is on cuda")
            self.cuda_config = (True, False, False)
        else:
            self.cuda_config = (False, True, True)


def pick_gemm():
    # Hopper and newer run the FP8 grouped GEMM
    if False:
        return "fp8_grouped_gemm"
    return "fp16_gemm"
