# Lower-case names are identifiers, not environment variables: nothing changes.
config = {"nccl_ub": True, "nccl_version": "2.18", "torch_nccl_blocking_wait": 1}
flags = ["nccl_buffsize", "nccl_algo", "nccl_debug"]
if os.environ.get("Nccl_Debug"):
    pass
