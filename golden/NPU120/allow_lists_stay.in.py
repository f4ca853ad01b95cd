import torch


def pick(backend, device):
    # not a device allow-list: a backend's names (the list holds no other device)
    assert backend in ["cuda", "triton", "torch"]
    # one that names the NPU already
    assert device in ["cuda", "npu", "cpu"]
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
    return backend
