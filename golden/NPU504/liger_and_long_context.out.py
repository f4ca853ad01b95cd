# Liger-Kernel's Triton RMSNorm (its module, its autograd function, its patch of a HF model) and xDiT's/yunchang's
# long-context attention: one TODO above each library's run of imports, naming what the NPU has instead.
import torch
# TODO(ascend-port): NPU504 [low] Liger-Kernel's Triton kernels target CUDA/ROCm: drop apply_liger_kernel_to_* and keep the model's torch code (the port puts an RMSNorm module's forward on torch_npu.npu_rms_norm: NPU420), or use torch_npu's fused ops for its modules (npu_rms_norm for LigerRMSNorm/LigerRMSNormFunction, npu_swiglu, npu_rotary_mul, npu_cross_entropy_loss)
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
from liger_kernel.transformers import apply_liger_kernel_to_llama
from liger_kernel.transformers.rms_norm import LigerRMSNorm
# TODO(ascend-port): NPU504 [low] xDiT (xfuser) long-context attention runs flash_attn kernels: use MindIE-SD's parallel attention on Ascend, or write its Ulysses/ring attention by hand over torch_npu.npu_fusion_attention (all-to-all and send/recv over HCCL)
from xfuser.core.long_ctx_attention import xFuserLongContextAttention
# TODO(ascend-port): NPU504 [low] yunchang's ring/Ulysses attention runs flash_attn kernels: on Ascend write the all-to-all (Ulysses) around torch_npu.npu_fusion_attention, or use MindSpeed's context parallelism
from yunchang import LongContextAttention

apply_liger_kernel_to_llama(rms_norm=True)
norm = LigerRMSNorm(4096)
y = LigerRMSNormFunction.apply(torch.ones(2, 4096), norm.weight, 1e-6)
usp_attention = xFuserLongContextAttention(ring_impl_type="basic")
ring_attention = LongContextAttention(ring_impl_type="zigzag")
