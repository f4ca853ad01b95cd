# The CUDA branch of a multi-device chain that returns the device with its dtype gains an NPU branch that returns
# "npu" (a tuple returned under the CUDA test is the device and what was chosen for it).
import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def pick():
    if torch.cuda.is_available():
        torch.set_float32_matmul_precision("high")
        return "cuda", torch.bfloat16
    elif hasattr(torch, "npu") and torch.npu.is_available():
        torch.set_float32_matmul_precision("high")
        return "npu", torch.bfloat16
    elif torch.backends.mps.is_available():
        return "mps", torch.float32
    return "cpu", torch.float32
