# SageAttention is a CUDA-only library: its import says so; its functions named for CUDA are no extension's ops.
# TODO(ascend-port): NPU504 [low] SageAttention's quantized attention kernels are CUDA-only: use torch_npu.npu_fusion_attention (or F.scaled_dot_product_attention) in its place
from sageattention import sageattn_qk_int8_pv_fp8_cuda


def attend(q, k, v):
    return sageattn_qk_int8_pv_fp8_cuda(q=q, k=k, v=v)
