# One TODO above a run of imports of the same CUDA-only library; another library, or an import further down, gets its own.
# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
from bitsandbytes.optim import AdamW8bit
import bitsandbytes.functional as bnbF
import bitsandbytes as bnb
# TODO(ascend-port): NPU504 [low] CuPy runs only on CUDA: use torch tensors on the npu device (torch covers most of CuPy's NumPy-like API) or NumPy on the host; RawKernel/ElementwiseKernel code needs a torch, Triton-Ascend or Ascend C port
import cupy

import torch

try:
    # TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
    import bitsandbytes
except ImportError:
    bitsandbytes = None
