import torch


def step(batch, model):
    x = batch.cuda(non_blocking=True)
    y = x.double()
    z = x.type(torch.float64)
    buffer = torch.cuda.DoubleTensor(4)
    w = x.type(torch.cuda.DoubleTensor)
    return y, z, buffer, w


# Must not change: the double-precision names never go to the device.
def host(values):
    x = torch.tensor(values)
    return x.double(), x.type(torch.float64)
