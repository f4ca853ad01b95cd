# A name bound to torch.cuda.is_available() that only multi-device chains test keeps its meaning: the chain gains
# an NPU branch that asks the NPU (the name would send an NPU host down the CUDA branch if its binding were ported).
import torch

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = torch.backends.mps.is_available()


def preferred_device():
    if HAS_CUDA:
        return torch.device("cuda")
    if HAS_MPS:
        return torch.device("mps")
    return torch.device("cpu")
