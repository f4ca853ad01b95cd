# A function that runs nvidia-smi describes the NVIDIA GPUs: CUDA_VISIBLE_DEVICES filters what nvidia-smi lists, and
# torch.cuda counts the same GPUs. It stays CUDA's (ASCEND_RT_VISIBLE_DEVICES says nothing of NVIDIA GPUs).
import os
import subprocess

import torch


def count_nvidia_gpus() -> int:
    try:
        listing = subprocess.check_output(["nvidia-smi", "-L"]).decode("utf-8").strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return 0
    devices = [line.split(":")[0].split()[1] for line in listing.split("\n") if line.startswith("GPU")]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        devices = [d for d in devices if d in visible.split(",")]
    assert len(devices) == torch.cuda.device_count()
    return len(devices)


def topology() -> str:
    return os.popen("nvidia-smi topo -m").read() + os.environ.get("CUDA_VISIBLE_DEVICES", "")
