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
