PREFIX = "NCCL_"
pattern = "NCCL_*"
message = "set NCCL_DEBUG=INFO for details"
