import os

# Converted: a whole number of MiB, NCCL's ring, a timeout HCCL accepts.
os.environ["HCCL_BUFFSIZE"] = "4"
os.environ.setdefault("HCCL_BUFFSIZE", "8")
os.environ["HCCL_ALGO"] = "level0:NA;level1:ring"
os.environ["HCCL_RDMA_TIMEOUT"] = "20"
# TODO(ascend-port): NPU209 [low] NCCL_IB_TC kept (HCCL does not accept '106'); HCCL_RDMA_TC takes a multiple of 4 in [0, 255]: set HCCL_RDMA_TC by hand
env = {"HCCL_RDMA_RETRY_CNT": "7", "NCCL_IB_TC": 106, "HCCL_SOCKET_FAMILY": "AF_INET"}

# Kept with a TODO: no HCCL counterpart, out of range, or known only at run time.
# TODO(ascend-port): NPU209 [low] NCCL_ALGO kept (HCCL does not accept 'Tree'); HCCL_ALGO takes "level0:NA;level1:<ring|H-D_R|NHR|NB|pipeline>" (NCCL_ALGO=Ring -> level1:ring): set HCCL_ALGO by hand
os.environ["NCCL_ALGO"] = "Tree"
# TODO(ascend-port): NPU209 [low] NCCL_BUFFSIZE kept (HCCL does not accept '4000000'); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
os.environ["NCCL_BUFFSIZE"] = str(4 * 1000 * 1000)
# TODO(ascend-port): NPU209 [low] NCCL_IB_TIMEOUT kept (HCCL does not accept '23'); HCCL_RDMA_TIMEOUT takes an integer in [5, 20] (NCCL_IB_TIMEOUT: 1-31): set HCCL_RDMA_TIMEOUT by hand
os.environ["NCCL_IB_TIMEOUT"] = "23"
# TODO(ascend-port): NPU209 [low] NCCL_BUFFSIZE kept (its value is not a literal); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
os.environ["NCCL_BUFFSIZE"] = str(args.buffer_size)
# TODO(ascend-port): NPU209 [low] NCCL_BUFFSIZE kept (read or named here, its value set elsewhere); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
size = int(os.environ.get("NCCL_BUFFSIZE", "4194304"))
