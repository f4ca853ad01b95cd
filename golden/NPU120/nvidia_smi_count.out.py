# A serving library's device connector (LitServe's shape): the accelerator is a value the module lets be "cuda" or
# "mps", so `self._accelerator == "cuda"` is a choice between devices, and so are the `if` statements of one block
# where a `try` that imports torch holds the next test. nvidia_smi_count() counts the NVIDIA GPUs by running
# nvidia-smi: a CUDA count probe of the project's own, whose NPU form is the NPUs torch_npu sees. Each CUDA branch
# stays as it is and gains an NPU branch that asks _npu_device_count(), written after the probe (which stays CUDA's).
import subprocess


def nvidia_smi_count() -> int:
    try:
        return len(subprocess.check_output(["nvidia-smi", "-L"]).splitlines())
    except (subprocess.CalledProcessError, FileNotFoundError):
        return 0


def _npu_device_count() -> int:
    """NPU counterpart of the nvidia-smi count above (by ascend-port): the NPUs torch_npu sees, 0 without it."""
    try:
        import torch
        import torch_npu  # noqa: F401
    except ImportError:
        return 0
    return torch.npu.device_count()


class Connector:
    def __init__(self, accelerator: str = "auto"):
        if accelerator in ("cpu", "cuda", "npu", "mps"):
            self._accelerator = accelerator
        else:
            self._accelerator = self._choose_gpu_accelerator_backend()
        if self._accelerator not in ("cuda", "npu", "mps", "cpu"):
            raise ValueError(f"accelerator must be one of (cuda, mps, cpu), got {self._accelerator}")

    def device_count(self) -> int:
        if self._accelerator == "cuda":
            return nvidia_smi_count()
        elif self._accelerator == "npu":
            return _npu_device_count()
        return 1

    @staticmethod
    def _choose_gpu_accelerator_backend():
        if nvidia_smi_count() > 0:
            return "cuda"
        elif _npu_device_count() > 0:
            return "npu"

        try:
            import torch

            if torch.backends.mps.is_available():
                return "mps"
        except ImportError:
            return None

        return None
