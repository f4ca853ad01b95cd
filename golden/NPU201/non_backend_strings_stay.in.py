"""Talks to nccl through torch.distributed."""

NCCL_HELP = "nccl is the NVIDIA collective library"
kinds = ["nccl-tests", "nccl2", "libnccl.so"]
print(f"nccl {kinds}")
