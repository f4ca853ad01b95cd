# At import time the first PartialState() would set up the process group: torch.accelerator serves there, the
# shared state in functions.
import torch
from accelerate import PartialState

probe = torch.ones(1).cuda()


def place(model):
    return model.cuda()
