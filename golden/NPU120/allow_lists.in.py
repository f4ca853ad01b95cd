import argparse
from typing import Literal

import torch


def init(device_type="cuda"):
    assert device_type in ["cuda", "mps", "cpu"]
    if device_type == "cuda":
        torch.cuda.set_device(0)
    elif device_type == "mps":
        pass
    return torch.device(device_type)


def check(device: Literal["cuda", "mps", "cpu"]):
    if device not in ("cuda", "mps", "cpu"):
        raise ValueError(device)


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda", choices=["cuda", "mps", "cpu"])
