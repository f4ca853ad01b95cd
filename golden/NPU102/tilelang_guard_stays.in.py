import torch

try:
    from my_kernels.tilelang_ops import tilelang_gemm
except ImportError:
    tilelang_gemm = None


def gemm(a, b):
    if tilelang_gemm is not None and a.is_cuda and b.is_cuda:
        return tilelang_gemm(a, b)
    return torch.matmul(a, b)
