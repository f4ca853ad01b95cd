import torch_npu
import torch.distributed as dist


def timeout_for(backend):
    seconds = 1800 if backend != "hccl" else 600
    if dist.get_backend() == "hccl":
        seconds += 1
    assert backend in ("hccl", "gloo"), backend
    if "hccl" in backend:
        return seconds
    return seconds
