# Liger-Kernel's Triton RMSNorm (its module, its autograd function, its patch of a HF model) and xDiT's/yunchang's
# long-context attention: one TODO above each library's run of imports, naming what the NPU has instead.
import torch
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
from liger_kernel.transformers import apply_liger_kernel_to_llama
from liger_kernel.transformers.rms_norm import LigerRMSNorm
from xfuser.core.long_ctx_attention import xFuserLongContextAttention
from yunchang import LongContextAttention

apply_liger_kernel_to_llama(rms_norm=True)
norm = LigerRMSNorm(4096)
y = LigerRMSNormFunction.apply(torch.ones(2, 4096), norm.weight, 1e-6)
usp_attention = xFuserLongContextAttention(ring_impl_type="basic")
ring_attention = LongContextAttention(ring_impl_type="zigzag")
