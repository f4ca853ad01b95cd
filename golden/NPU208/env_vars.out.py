import os

os.environ["HCCL_SOCKET_IFNAME"] = "eth0"
# TODO(ascend-port): NPU208 [medium] HCCL_BUFFSIZE is in MB (NCCL_BUFFSIZE was in bytes): convert the value
os.environ["HCCL_BUFFSIZE"] = str(8 * 1024 * 1024)
# TODO(ascend-port): NPU208 [medium] HCCL_ALGO takes per-level algorithms (e.g. "level0:NA;level1:ring"), not NCCL_ALGO's list: rewrite the value
os.environ["HCCL_ALGO"] = "Ring"
os.environ["HCCL_RDMA_TIMEOUT"] = "22"
