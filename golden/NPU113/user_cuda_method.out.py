import torch
import torch_npu


class Batch:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def cuda(self, non_blocking=False):
        self.x = self.x.npu(non_blocking=non_blocking)
        self.y = self.y.npu(non_blocking=non_blocking)
        return self

    npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())

    def pin(self):
        return self.cuda()


def train(x, y, model):
    batch = Batch(x, y)
    batch.cuda()
    other = Batch(x, y).cuda(non_blocking=True)
    model.npu()
    return model(batch.x), other
