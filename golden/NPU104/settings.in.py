import argparse
from dataclasses import dataclass

DEVICE = "cuda"
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])


@dataclass
class Config:
    device: str = "cuda:0"
    accelerator: str = "cuda"


def run(model, device="cuda"):
    settings = {"device": "cuda", "name": "cuda"}
    return model, settings


# dispatch tables keyed by device type keep their entries (NPU120 adds an npu one beside cuda)
BACKEND_DEVICE_COUNT = {"cuda": len, "cpu": len}
SUPPORTED_DEVICES = ("cuda", "xpu")
