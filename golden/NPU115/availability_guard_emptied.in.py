# The CUDA availability test around an advisory check goes with it when nothing else is left inside (ported, it
# would be an empty `if torch.cuda.is_available(): pass`); with anything else inside it stays.
import warnings

import torch


def check():
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        if major < 8:
            warnings.warn("bf16 needs an Ampere GPU")
    return torch.cuda.is_available()


def setup(model):
    if torch.cuda.is_available():
        if torch.cuda.get_device_capability()[0] < 8:
            print("slow GPU")
        model = model.cuda()
    return model
