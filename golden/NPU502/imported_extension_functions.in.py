import torch
from mypkg.ops import selective_scan_cuda as scan_ext
from fused_norm_cuda import fwd, bwd as backward
from fused_dense_cuda_ext import (
    linear_bias_forward,
)


def norm(x, weight):
    y = fwd(x, weight, 1e-5)
    grad = backward(y)
    return y, grad


def dense(x, w, b):
    return linear_bias_forward(x, w, b)


def scan(u):
    return scan_ext.fwd(u)


# Must not change: a local function that shadows nothing, a method of another object, a name in a string.
def fwd_like(x):
    return x.fwd(1), torch.relu(x), "fwd(x)"
