import torch


def step(model, x):
    torch.cuda.synchronize()
    return model(x)


def tune():
    if torch.npu.is_available():
        torch.npu.mstx.range_pushh("tune")  # a typo: the class mstx has no such member
    torch.npu.default_generators  # public, in no __all__: the inventory cannot tell, so it passes
    return torch.npu.Stream()  # in every release: passes


class Trainer:
    @torch.npu.mstx.range("helper")
    def helper(self):
        return 0
