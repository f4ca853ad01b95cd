# The CUDA branch of a multi-device chain that returns the device with its dtype gains an NPU branch that returns
# "npu" (a tuple returned under the CUDA test is the device and what was chosen for it).
import torch


def pick():
    if torch.cuda.is_available():
        torch.set_float32_matmul_precision("high")
        return "cuda", torch.bfloat16
    elif torch.backends.mps.is_available():
        return "mps", torch.float32
    return "cpu", torch.float32
