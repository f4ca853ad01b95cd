# Only the function that runs nvidia-smi stays CUDA's: the rest of the module is ported.
import os
import subprocess

import torch
import torch_npu


def nvidia_gpus() -> str:
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout


def visible() -> str:
    return os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")


def main() -> None:
    # it runs nvidia-smi, but puts work on the GPU: ported as any code
    subprocess.run(["nvidia-smi"])
    os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    x = torch.ones(2).npu()
    print(x)
