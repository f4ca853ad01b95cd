import bitsandbytes as bnb
import torch
from peft import prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("x", quantization_config=quantization)
legacy = AutoModelForCausalLM.from_pretrained("x", load_in_8bit=True, device_map="auto")
model = prepare_model_for_kbit_training(model)
optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)
layer = bnb.nn.Linear8bitLt(16, 16)
