# TODO(ascend-port): NPU504 [low] bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW(foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights
import bitsandbytes as bnb
import torch
from peft import prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

# TODO(ascend-port): NPU804 [low] BitsAndBytesConfig, load_in_4bit: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("x", quantization_config=quantization)
# TODO(ascend-port): NPU804 [low] load_in_8bit: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
legacy = AutoModelForCausalLM.from_pretrained("x", load_in_8bit=True, device_map="auto")
# TODO(ascend-port): NPU804 [low] prepare_model_for_kbit_training: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
model = prepare_model_for_kbit_training(model)
# TODO(ascend-port): NPU804 [low] bitsandbytes.optim.AdamW8bit: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)
# TODO(ascend-port): NPU804 [low] bitsandbytes.nn.Linear8bitLt: bitsandbytes is CUDA-only here: load the weights in bf16 (torch_npu.npu_weight_quant_batchmatmul for low-bit weights, msModelSlim to quantise for inference) and use torch_npu.optim.NpuFusedAdamW or torch.optim.AdamW(foreach=True) instead of 8-bit optimizers
layer = bnb.nn.Linear8bitLt(16, 16)
