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
