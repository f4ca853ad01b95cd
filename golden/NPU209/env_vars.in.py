import os

os.environ["NCCL_DEBUG"] = "INFO"
if "NCCL_P2P_DISABLE" not in os.environ or "NCCL_IB_DISABLE" not in os.environ:
    os.environ["NCCL_P2P_DISABLE"] = "1"
os.environ["TORCH_NCCL_AVOID_RECORD_STREAMS"] = "1"
os.environ["NCCL_TIMEOUT"] = "1800"
