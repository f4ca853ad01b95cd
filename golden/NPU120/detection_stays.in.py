import os


def detect_accelerator():
    """Which accelerator to use: the environment's choice, else the first one that imports."""
    name = os.environ.get("MY_ACCELERATOR")
    if name is None:
        try:
            import torch_npu  # noqa: F401

            name = "npu"
        except ImportError:
            pass
    if name is None:
        try:
            import torch

            if torch.cuda.device_count() > 0 and torch.cuda.is_available():
                name = "cuda"
        except (RuntimeError, ImportError):
            pass
    return name or "cpu"
