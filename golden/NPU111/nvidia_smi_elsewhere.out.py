# Only the function that runs nvidia-smi stays CUDA's: the rest of the module is ported.
import os
import subprocess


def nvidia_gpus() -> str:
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout


def visible() -> str:
    return os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")
