# A name bound to torch.cuda.is_available() that other code uses too: that code moves to the NPU with the binding,
# and so does the chain's branch that tests it (never only one side of the name).
import torch
import torch_npu

HAS_CUDA = torch.npu.is_available()
HAS_MPS = torch.backends.mps.is_available()


def preferred_device():
    if HAS_CUDA:
        return torch.device("npu")
    if HAS_MPS:
        return torch.device("mps")
    return torch.device("cpu")


def place(model):
    if HAS_CUDA:
        model = model.npu()
    return model
