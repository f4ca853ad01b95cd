# "cuda" as the name of an implementation (a kernel backend, an enum, a mode, an execution provider), not a device:
# nothing here may change.
import argparse
import enum

import torch
from natten.functional import na2d
from spconv.pytorch import SparseConv3d


class Impl(enum.Enum):
    TORCH = "torch"
    CUDA = "cuda"
    TRITON = "triton"


parser = argparse.ArgumentParser()
parser.add_argument("--backend", default="cuda", choices=["cuda", "triton", "torch"])
parser.add_argument("--impl", type=str, default="cuda")


def neighborhood_attention(q, k, v, kernel_size):
    return na2d(q, k, v, kernel_size=kernel_size, backend="cuda")


conv = SparseConv3d(16, 32, 3, algo="cuda")


def attention(q, k, v, impl=Impl.CUDA, backend="cuda"):
    if impl == Impl.CUDA or backend == "cuda":
        # TODO(ascend-port): NPU502 [low] torch.ops.my_ext.attention is a custom operator (TORCH_LIBRARY in the project's C++/CUDA sources): give it an NPU kernel (an Ascend C operator registered for PrivateUse1) or replace it with torch/torch_npu ops
        return torch.ops.my_ext.attention(q, k, v)
    if backend in ("triton", "cuda"):
        return None
    return q @ k.transpose(-1, -2) @ v


def export(model, ort_fusions, mode):
    if ort_fusions not in (None, "cpu", "cuda", "webgpu"):
        raise ValueError(ort_fusions)
    experts = "batched_mm" if ort_fusions == "cuda" else None
    if mode == "cuda":
        # TODO(ascend-port): NPU502 [low] torch.ops.my_ext.fuse is a custom operator (TORCH_LIBRARY in the project's C++/CUDA sources): give it an NPU kernel (an Ascend C operator registered for PrivateUse1) or replace it with torch/torch_npu ops
        return torch.ops.my_ext.fuse(model), experts
    return model, experts
