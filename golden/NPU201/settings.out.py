import argparse
from dataclasses import dataclass
from typing import Optional


@dataclass
class ProcessGroupConfig:
    backend: Optional[str] = "hccl"
    timeout: int = 600


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="hccl", choices=["hccl", "gloo", "mpi"])
    parser.add_argument("--dist-backend", type=str, default="HCCL")
    return parser.parse_args()


def pick_backend(device_type, backend=None):
    if backend is None:
        backend = "hccl"
    fsdp_backend = "npu:hccl,cpu:gloo"
    return {"backend": backend, "fsdp": fsdp_backend}


DISTRIBUTED_BACKEND_MAP = {"cuda": "nccl", "npu": "hccl", "cpu": "gloo", "xpu": "xccl"}
