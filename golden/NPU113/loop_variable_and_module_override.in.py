import torch
from torch import nn


class Batch:
    def __init__(self, input_ids):
        self.input_ids = input_ids

    @torch.no_grad()
    def cuda(self, device=None, non_blocking=False):
        return Batch(self.input_ids.cuda(device, non_blocking=non_blocking))


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def cuda(self, device=None):
        self.inner.cuda(device)
        return super().cuda(device)


def main(batches, model):
    model = Wrapper(model).cuda()
    return model, [batch.cuda() for batch in batches]
