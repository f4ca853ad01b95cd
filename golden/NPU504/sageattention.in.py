# SageAttention is a CUDA-only library: its import says so; its functions named for CUDA are no extension's ops.
from sageattention import sageattn_qk_int8_pv_fp8_cuda


def attend(q, k, v):
    return sageattn_qk_int8_pv_fp8_cuda(q=q, k=k, v=v)
