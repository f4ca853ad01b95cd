import os

# Converted: a whole number of MiB, NCCL's ring, a timeout HCCL accepts.
os.environ["NCCL_BUFFSIZE"] = "4194304"
os.environ.setdefault("NCCL_BUFFSIZE", str(1 << 23))
os.environ["NCCL_ALGO"] = "Ring"
os.environ["NCCL_IB_TIMEOUT"] = "20"
env = {"NCCL_IB_RETRY_CNT": "7", "NCCL_IB_TC": 106, "NCCL_SOCKET_FAMILY": "AF_INET"}

# Kept with a TODO: no HCCL counterpart, out of range, or known only at run time.
os.environ["NCCL_ALGO"] = "Tree"
os.environ["NCCL_BUFFSIZE"] = str(4 * 1000 * 1000)
os.environ["NCCL_IB_TIMEOUT"] = "23"
os.environ["NCCL_BUFFSIZE"] = str(args.buffer_size)
size = int(os.environ.get("NCCL_BUFFSIZE", "4194304"))
