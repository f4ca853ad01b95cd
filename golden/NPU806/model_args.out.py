import lm_eval
from lm_eval.models.huggingface import HFLM

r = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2,device=npu:1,dtype=bfloat16", tasks=["hellaswag"])
r2 = lm_eval.simple_evaluate(model="hf", model_args='pretrained=gpt2, device=npu:0', device="npu:0")
r3 = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2,device=npu:0")
r4 = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2,device_map=cuda")
