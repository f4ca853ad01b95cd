import logging
import warnings

import torch

logger = logging.getLogger(__name__)


def main():
    if torch.cuda.get_device_capability()[0] < 8:
        warnings.warn("bf16 is not supported on this GPU: training in fp16")
    major, minor = torch.cuda.get_device_capability()
    if major < 7:
        logger.warning("this GPU is old and slow")
    print(f"capability: {torch.cuda.get_device_capability()}")
    model = torch.nn.Linear(2, 2).cuda()
    return model


def check():
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8:
        print("an old GPU: expect it to be slow")
    return True
