import argparse
from dataclasses import dataclass

DEVICE = "npu"
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="npu", choices=["npu", "cpu"])


@dataclass
class Config:
    device: str = "npu:0"
    accelerator: str = "npu"


def run(model, device="npu"):
    settings = {"device": "npu", "name": "cuda"}
    return model, settings


# dispatch tables keyed by device type keep their entries (NPU120 adds an npu one beside cuda)
BACKEND_DEVICE_COUNT = {"cuda": len, "npu": len, "cpu": len}
SUPPORTED_DEVICES = ("cuda", "xpu")
