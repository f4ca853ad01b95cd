# A type check runs none of bitsandbytes' code, and `torch.optim.RMSprop` is torch's even where a function imports
# bitsandbytes' RMSprop: neither gets a TODO. Building a bitsandbytes object by its bare name does.
import torch
# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
from bitsandbytes.nn import Int8Params


def is_quantized(m):
    # TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
    import bitsandbytes as bnb

    return isinstance(m, (bnb.nn.Linear4bit, Int8Params))


def bnb_rmsprop():
    # TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
    from bitsandbytes.optim import RMSprop

    # TODO(ascend-port): NPU804 [low] bitsandbytes.optim.RMSprop: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
    return RMSprop


def torch_rmsprop():
    return torch.optim.RMSprop


def quantize(w):
    # TODO(ascend-port): NPU804 [low] bitsandbytes.nn.Int8Params: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
    return Int8Params(w, requires_grad=False)
