# LLaMA-Factory's get_current_device(): the device it returns is a name bound to device strings alone.
import os

import torch


def get_current_device() -> "torch.device":
    if hasattr(torch, "npu") and torch.npu.is_available():
        device = "npu:{}".format(os.getenv("LOCAL_RANK", "0"))
    elif torch.cuda.is_available():
        device = "cuda:{}".format(os.getenv("LOCAL_RANK", "0"))
    else:
        device = "cpu"
    return torch.device(device)


def load(model):
    return model.to(get_current_device())
