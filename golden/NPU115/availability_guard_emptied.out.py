# The CUDA availability test around an advisory check goes with it when nothing else is left inside (ported, it
# would be an empty `if torch.cuda.is_available(): pass`); with anything else inside it stays.
import warnings

import torch
import torch_npu


def check():
    return torch.npu.is_available()


def setup(model):
    if torch.npu.is_available():
        model = model.npu()
    return model
