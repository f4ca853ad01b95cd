import torch
from mypkg.ops import selective_scan_cuda as scan_ext
from fused_norm_cuda import fwd, bwd as backward
from fused_dense_cuda_ext import (
    linear_bias_forward,
)


def norm(x, weight):
    # TODO(ascend-port): NPU502 [low] fwd() is an op of the CUDA extension fused_norm_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    y = fwd(x, weight, 1e-5)
    # TODO(ascend-port): NPU502 [low] backward() is an op of the CUDA extension fused_norm_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    grad = backward(y)
    return y, grad


def dense(x, w, b):
    # TODO(ascend-port): NPU502 [low] linear_bias_forward() is an op of the CUDA extension fused_dense_cuda_ext: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    return linear_bias_forward(x, w, b)


def scan(u):
    # TODO(ascend-port): NPU502 [low] scan_ext.fwd() is an op of the CUDA extension mypkg.ops.selective_scan_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    return scan_ext.fwd(u)


# Must not change: a local function that shadows nothing, a method of another object, a name in a string.
def fwd_like(x):
    return x.fwd(1), torch.relu(x), "fwd(x)"
