# A name bound to torch.cuda.is_available() and bound again: its binding is ported, and so is the branch it tests.
import torch

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = torch.backends.mps.is_available()


def configure(flag):
    global HAS_CUDA
    HAS_CUDA = flag


def preferred_device():
    if HAS_CUDA:
        return torch.device("cuda")
    if HAS_MPS:
        return torch.device("mps")
    return torch.device("cpu")
