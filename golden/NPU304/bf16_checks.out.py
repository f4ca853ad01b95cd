import torch
import torch_npu


def pick_dtype():
    return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16


def supports_bf16():
    return torch.npu.is_bf16_supported()


def configure(args):
    # Ampere or newer
    if torch.npu.is_bf16_supported():
        args.dtype = torch.bfloat16
    else:
        args.dtype = torch.float16
    return args


def amp_dtype():
    use_bf16 = torch.npu.is_bf16_supported()
    return torch.bfloat16 if use_bf16 else torch.float16


def auto_dtype():
    if torch.npu.is_bf16_supported():
        return torch.bfloat16
    return torch.float16
