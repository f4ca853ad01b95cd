import torch


def pick_dtype():
    # not advice: the check chooses the dtype (NPU108's guard, with its TODO)
    if torch.cuda.get_device_capability()[0] < 8:
        dtype = torch.float16
    else:
        dtype = torch.bfloat16
    return dtype


def require():
    # not advice either: it stops the program
    if torch.cuda.get_device_capability()[0] < 7:
        raise RuntimeError("needs Volta or newer")
