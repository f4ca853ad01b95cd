# Must not change: an enum of implementations (its values are the names configurations choose them by) and the
# Literal of a setting that is no process-group backend (Transformer Engine's userbuffers bootstrap).
import enum
from dataclasses import dataclass
from typing import Literal


class GradSyncImpl(str, enum.Enum):
    nccl = "nccl"
    torch = "torch"


@dataclass
class ModelParallelConfig:
    tp_comm_bootstrap_backend: Literal["nccl", "mpi", "gloo"] = "nccl"


def bootstrap(ub_backend: Literal["nccl", "mpi"] = "nccl"):
    return ub_backend
