import torch


def cast_inputs(x):
    if torch.is_autocast_enabled():
        x = x.to(torch.get_autocast_gpu_dtype())
    return x


def force_half():
    torch.set_autocast_gpu_dtype(torch.float16)
    torch.set_autocast_enabled(True)
