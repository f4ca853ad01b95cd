import torch


class Batch:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def cuda(self, non_blocking=False):
        self.x = self.x.cuda(non_blocking=non_blocking)
        self.y = self.y.cuda(non_blocking=non_blocking)
        return self

    def pin(self):
        return self.cuda()


def train(x, y, model):
    batch = Batch(x, y)
    batch.cuda()
    other = Batch(x, y).cuda(non_blocking=True)
    model.cuda()
    return model(batch.x), other
