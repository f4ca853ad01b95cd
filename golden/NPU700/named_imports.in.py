import torch
from torch.cuda.nvtx import range_pop, range_push


def step():
    range_push("step")
    range_pop()
    torch.cuda.nvtx.some_private_helper()
