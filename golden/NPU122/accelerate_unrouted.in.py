# accelerate's Accelerator imported, but none made in reach and no shared state imported: a second Accelerator()
# is not made, the device strings stay reported and `.cuda()` goes through torch.accelerator.
import torch
from accelerate import Accelerator


def build(config):
    return Accelerator(**config)


def evaluate(model, batch):
    return model(batch.to("cuda")), torch.ones(1).cuda()
