import logging
import warnings

import torch
import torch_npu

logger = logging.getLogger(__name__)


def main():
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
    print(f"capability: {torch.npu.get_device_capability()}")
    model = torch.nn.Linear(2, 2).npu()
    return model


def check():
    return True
