# The CUDA count comes from another module (what it runs is not known here) or is no count (a list of names): the
# CUDA branches keep their TODO.
import subprocess

from .probes import count_gpus


def gpu_names() -> list:
    try:
        return subprocess.check_output(["nvidia-smi", "-L"]).decode().splitlines()
    except FileNotFoundError:
        return []


class Connector:
    def __init__(self, accelerator: str = "auto"):
        if accelerator in ("cpu", "cuda", "mps"):
            self._accelerator = accelerator
        if self._accelerator not in ("cuda", "mps", "cpu"):
            raise ValueError(self._accelerator)

    def device_count(self) -> int:
        if self._accelerator == "cuda":
            return count_gpus()
        return 1

    def names(self) -> list:
        if self._accelerator == "cuda":
            return gpu_names()
        return []
