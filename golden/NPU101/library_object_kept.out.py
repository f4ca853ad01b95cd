# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
import bitsandbytes as bnb
import torch
import torch_npu
# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
from bitsandbytes.nn import Int8Params


class LoRALinear(torch.nn.Module):
    def merge(self, lora_data):
        weight = self.linear.weight
        weight_data = bnb.functional.dequantize_4bit(weight.data, weight.quant_state)
        weight_data += lora_data
        # a bitsandbytes weight is quantized by moving it to CUDA: its .cuda() stays (the library is CUDA-only)
        # TODO(ascend-port): NPU804 [low] bitsandbytes.nn.Params4bit: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
        self.linear.weight = bnb.nn.Params4bit(weight_data, requires_grad=False, **weight.__dict__)
        self.linear.weight.cuda(weight.device)

    def unmerge(self, lora_data):
        # not a bitsandbytes object here: ported
        self.linear.weight.npu()
        # what the library's functions return is a torch tensor: ported
        return bnb.functional.dequantize_4bit(self.linear.weight.data, self.linear.weight.quant_state).npu()


def quantize(w):
    # TODO(ascend-port): NPU804 [low] bitsandbytes.nn.Linear4bit: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
    layer = bnb.nn.Linear4bit(16, 16).cuda()
    # TODO(ascend-port): NPU804 [low] bitsandbytes.nn.Int8Params: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
    int8 = Int8Params(w, requires_grad=False)
    int8 = int8.cuda()
    return layer, int8, w.npu()
