import torch

# Must not change: the names of CUDA extensions in comments and strings are no imports (fwd_cuda), and a module
# named like one is not imported here.
NAME = "selective_scan_cuda"


def fwd(x):
    return torch.relu(x)


def run(x):
    return fwd(x), NAME.upper()
