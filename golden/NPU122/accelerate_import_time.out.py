# At import time the first PartialState() would set up the process group: torch.accelerator serves there, the
# shared state in functions.
import torch
from accelerate import PartialState

probe = torch.ones(1).to(torch.accelerator.current_accelerator())


def place(model):
    return model.to(PartialState().device)
