import warnings
from typing import Literal

import torch

# a Literal that is not a parameter's device: left as it is
Activity = Literal["cpu", "cuda", "xpu"]


def load(device, pre_quantized):
    # a list on the way to a CUDA-only feature: "npu" is not added, the feature stays off on the NPU
    if device.type not in ["cuda", "xpu", "cpu"]:
        warnings.warn("mxfp4 kernels need cuda/xpu/cpu: dequantizing to bf16")
        pre_quantized = False
    # the module's dispatch, which gains an NPU branch
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "xpu":
        torch.xpu.empty_cache()
    return pre_quantized
