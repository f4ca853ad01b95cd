# A name bound to torch.cuda.is_available() that only multi-device chains test keeps its meaning: the chain gains
# an NPU branch that asks the NPU (the name would send an NPU host down the CUDA branch if its binding were ported).
import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = torch.backends.mps.is_available()


def preferred_device():
    if HAS_CUDA:
        return torch.device("cuda")
    elif hasattr(torch, "npu") and torch.npu.is_available():
        return torch.device("npu")
    if HAS_MPS:
        return torch.device("mps")
    return torch.device("cpu")
