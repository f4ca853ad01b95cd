# A name bound to torch.cuda.is_available() and bound again: its binding is ported, and so is the branch it tests.
import torch
import torch_npu

HAS_CUDA = torch.npu.is_available()
HAS_MPS = torch.backends.mps.is_available()


def configure(flag):
    global HAS_CUDA
    HAS_CUDA = flag


def preferred_device():
    if HAS_CUDA:
        return torch.device("npu")
    if HAS_MPS:
        return torch.device("mps")
    return torch.device("cpu")
