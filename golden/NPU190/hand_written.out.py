import torch
import torch_npu


def step(model, x):
    torch.npu.synchronize()
    return model(x)


def tune():
    if torch.npu.is_available():
        # TODO(ascend-port): NPU190 [low] torch.npu.mstx.range_pushh is missing from torch_npu 2.14.0 (in no release ascend-port knows): port by hand
        torch.npu.mstx.range_pushh("tune")  # a typo: the class mstx has no such member
    torch.npu.default_generators  # public, in no __all__: the inventory cannot tell, so it passes
    return torch.npu.Stream()  # in every release: passes


class Trainer:
    # TODO(ascend-port): NPU190 [low] torch.npu.mstx.range is missing from torch_npu 2.14.0 (in no release ascend-port knows): port by hand
    @torch.npu.mstx.range("helper")
    def helper(self):
        return 0
