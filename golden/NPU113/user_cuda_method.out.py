import torch
import torch_npu


class Batch:
    def __init__(self, x, y):
        self.x, self.y = x, y

    # TODO(ascend-port): NPU113 [low] Batch.cuda() is this class's own method: calls known to reach it keep the name; calls on objects of unknown type are renamed to .npu(), which skips it: check them
    def cuda(self, non_blocking=False):
        self.x = self.x.npu(non_blocking=non_blocking)
        self.y = self.y.npu(non_blocking=non_blocking)
        return self

    def pin(self):
        return self.cuda()


def train(x, y, model):
    batch = Batch(x, y)
    batch.cuda()
    other = Batch(x, y).cuda(non_blocking=True)
    model.npu()
    return model(batch.x), other
