import torch
import torch_npu


class Batch:
    def __init__(self, x):
        self.x = x

    # TODO(ascend-port): NPU114 [low] Batch.cuda() is this class's own method and the class has its own npu(): calls on objects of unknown type are renamed to .npu(), which reaches npu(), not cuda(): check them
    def cuda(self):
        self.x = self.x.npu()
        return self

    def npu(self):
        raise RuntimeError("not on this host")


def move(batches):
    return [b.npu() for b in batches]
