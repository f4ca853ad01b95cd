import torch


class Batch:
    def __init__(self, x):
        self.x = x

    def cuda(self):
        return Batch(self.x.cuda())


def load(batch):
    return batch.cuda()
