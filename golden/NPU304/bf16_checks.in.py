import torch


def pick_dtype():
    return torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16


def supports_bf16():
    return torch.cuda.get_device_capability() >= (8, 0)


def configure(args):
    # Ampere or newer
    major, minor = torch.cuda.get_device_capability()
    if major >= 8:
        args.dtype = torch.bfloat16
    else:
        args.dtype = torch.float16
    return args


def amp_dtype():
    cap = torch.cuda.get_device_capability(0)
    use_bf16 = cap[0] > 7
    return torch.bfloat16 if use_bf16 else torch.float16


def auto_dtype():
    if torch.cuda.get_device_capability()[0] >= 8 and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16
