def is_collective(backend):
    return backend in ("nccl", "hccl", "xccl")
