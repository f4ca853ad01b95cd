import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("x", load_in_8bit=False, torch_dtype=torch.bfloat16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
