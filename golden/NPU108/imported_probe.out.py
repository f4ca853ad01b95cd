import torch
import torch_npu
# TODO(ascend-port): NPU108 [low] get_device_capability stays imported from torch.cuda for this module's CUDA capability checks (torch.npu's returns None or lacks .major/.minor): test the feature instead
from torch.cuda import get_device_capability


def supports_int8_mma():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    return get_device_capability()[0] >= 7


x = torch.ones(2).npu()
