DDP_BACKENDS = ["nccl", "gloo", "mpi", "hccl"]
BACKEND_CLASSES = {"nccl": "NcclGroup", "hccl": "HcclGroup"}
