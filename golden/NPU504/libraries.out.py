# TODO(ascend-port): NPU504 [low] CuPy runs only on CUDA: use torch tensors on the npu device (torch covers most of CuPy's NumPy-like API) or NumPy on the host; RawKernel/ElementwiseKernel code needs a torch, Triton-Ascend or Ascend C port
import cupy as cp
# TODO(ascend-port): NPU504 [low] NVML (pynvml/nvidia-ml-py) sees no NPU: use torch.npu.mem_get_info(), torch.npu.memory_stats(), torch.npu.utilization() or `npu-smi info`
import pynvml
# TODO(ascend-port): NPU504 [low] TensorRT is NVIDIA-only: for inference on Ascend use torch.compile(backend="npugraph_ex") or TorchAir (torchair.get_npu_backend())
import tensorrt as trt
# TODO(ascend-port): NPU504 [low] Transformer Engine (FP8, fused CUDA layers) has no NPU build: use torch.nn layers under torch.autocast("npu", dtype=torch.bfloat16) with torch_npu fused ops (npu_fusion_attention, npu_rms_norm, npu_swiglu); FP8 recipes need a redesign
import transformer_engine.pytorch as te
# TODO(ascend-port): NPU504 [low] amp_C is apex's CUDA multi-tensor extension: remove the import and replace multi_tensor_applier(amp_C.<op>, ...) with torch._foreach_* ops (torch._foreach_norm, torch._foreach_mul_), which run on NPU
import amp_C
# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
import bitsandbytes as bnb
# TODO(ascend-port): NPU504 [low] numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend kernel or an Ascend C operator (numba's CPU @jit is fine)
from numba import cuda
# TODO(ascend-port): NPU504 [low] PyCUDA drives the CUDA driver: use torch.npu streams, events and memory with torch tensors; SourceModule kernels need a Triton-Ascend or Ascend C port
from pycuda.compiler import SourceModule
# TODO(ascend-port): NPU504 [low] Torch-TensorRT is NVIDIA-only: for inference on Ascend use torch.compile(backend="npugraph_ex") or TorchAir (torchair.get_npu_backend())
import torch_tensorrt


def free_memory(index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).free
