import torch
from torch.cuda import get_device_capability


def supports_int8_mma():
    return get_device_capability()[0] >= 7


x = torch.ones(2).cuda()
