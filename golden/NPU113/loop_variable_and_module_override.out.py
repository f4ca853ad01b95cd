import torch
import torch_npu
from torch import nn


class Batch:
    def __init__(self, input_ids):
        self.input_ids = input_ids

    @torch.no_grad()
    def cuda(self, device=None, non_blocking=False):
        return Batch(self.input_ids.npu(device, non_blocking=non_blocking))

    npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def cuda(self, device=None):
        self.inner.npu(device)
        return super().npu(device)

    npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())


def main(batches, model):
    model = Wrapper(model).cuda()
    return model, [batch.npu() for batch in batches]
