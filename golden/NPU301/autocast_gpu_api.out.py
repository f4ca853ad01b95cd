import torch
import torch_npu


def cast_inputs(x):
    if torch.npu.is_autocast_enabled():
        x = x.to(torch.npu.get_autocast_dtype())
    return x


def force_half():
    torch.npu.set_autocast_dtype(torch.float16)
    torch.npu.set_autocast_enabled(True)
