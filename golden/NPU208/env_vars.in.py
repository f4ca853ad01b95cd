import os

os.environ["NCCL_SOCKET_IFNAME"] = "eth0"
os.environ["NCCL_BUFFSIZE"] = str(8 * 1024 * 1024)
os.environ["NCCL_ALGO"] = "Ring"
os.environ["NCCL_IB_TIMEOUT"] = "22"
