import argparse
from typing import Literal

import torch
import torch_npu


def init(device_type="npu"):
    assert device_type in ["cuda", "npu", "mps", "cpu"]
    if device_type == "cuda":
        torch.cuda.set_device(0)
    elif device_type == "npu":
        torch.npu.set_device(0)
    elif device_type == "mps":
        pass
    return torch.device(device_type)


def check(device: Literal["cuda", "npu", "mps", "cpu"]):
    if device not in ("cuda", "npu", "mps", "cpu"):
        raise ValueError(device)


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda", choices=["cuda", "npu", "mps", "cpu"])
