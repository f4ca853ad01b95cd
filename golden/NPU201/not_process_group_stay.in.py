# "nccl" here is not a process-group backend: HCCL is no answer, the strings stay.
parser.add_argument("--moe-token-dispatcher-backend", default="nccl", choices=["nccl", "deepep"])
parser.add_argument("--tp-comm-bootstrap-backend", default="nccl", choices=["nccl", "mpi", "gloo"])
kv_transfer_backend = "nccl"
config = {"transfer_backend": "nccl", "moe_a2a_backend": "nccl"}
initialize_ub(shape, tp_size, bootstrap_backend="nccl")
engine = TransferEngine(transfer_backend="nccl")


def build(dispatcher_type: str = "nccl"):
    if args.moe_dispatcher == "nccl":
        return None

