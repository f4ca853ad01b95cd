import argparse
from dataclasses import dataclass
from typing import Optional


@dataclass
class ProcessGroupConfig:
    backend: Optional[str] = "nccl"
    timeout: int = 600


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="nccl", choices=["nccl", "gloo", "mpi"])
    parser.add_argument("--dist-backend", type=str, default="NCCL")
    return parser.parse_args()


def pick_backend(device_type, backend=None):
    if backend is None:
        backend = "nccl"
    fsdp_backend = "cuda:nccl,cpu:gloo"
    return {"backend": backend, "fsdp": fsdp_backend}


DISTRIBUTED_BACKEND_MAP = {"cuda": "nccl", "cpu": "gloo", "xpu": "xccl"}
