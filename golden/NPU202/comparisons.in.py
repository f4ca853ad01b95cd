import torch.distributed as dist


def timeout_for(backend):
    seconds = 1800 if backend != "nccl" else 600
    if dist.get_backend() == "nccl":
        seconds += 1
    assert backend in ("nccl", "gloo"), backend
    if "nccl" in backend:
        return seconds
    return seconds
