from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation="sdpa")
model_kwargs = {"attn_implementation": "eager"}
