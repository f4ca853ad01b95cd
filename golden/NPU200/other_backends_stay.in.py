import torch.distributed as dist


def setup(backend, rank):
    """Initialise with the "nccl" backend on GPUs."""
    dist.init_process_group("gloo", rank=rank)
    dist.init_process_group(backend=backend)
    dist.new_group(backend="hccl")
    torch_compile_backend = "inductor"
    return dist.Backend.GLOO
