import torch
from transformers import AutoModelForCausalLM

# TODO(ascend-port): NPU803 [low] attn_implementation="flash_attention_2" runs on NPUs with transformers >= 4.56.0 (its NPU integration, npu_fusion_attention): with an older transformers use "sdpa" (not with padding-free packing) or upgrade
model = AutoModelForCausalLM.from_pretrained(
    "meta-llama/Llama-3.1-8B",
    torch_dtype=torch.bfloat16,
    attn_implementation="flash_attention_2",
)
# TODO(ascend-port): NPU803 [low] attn_implementation="flash_attention_2" runs on NPUs with transformers >= 4.56.0 (its NPU integration, npu_fusion_attention): with an older transformers use "sdpa" (not with padding-free packing) or upgrade
model_kwargs = {"attn_implementation": "flash_attention_2", "torch_dtype": torch.bfloat16}
