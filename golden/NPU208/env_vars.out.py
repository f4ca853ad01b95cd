import os

os.environ["HCCL_SOCKET_IFNAME"] = "eth0"
os.environ["HCCL_BUFFSIZE"] = "8"
os.environ["HCCL_ALGO"] = "level0:NA;level1:ring"
# TODO(ascend-port): NPU209 [low] NCCL_IB_TIMEOUT kept (HCCL does not accept '22'); HCCL_RDMA_TIMEOUT takes an integer in [5, 20] (NCCL_IB_TIMEOUT: 1-31): set HCCL_RDMA_TIMEOUT by hand
os.environ["NCCL_IB_TIMEOUT"] = "22"
