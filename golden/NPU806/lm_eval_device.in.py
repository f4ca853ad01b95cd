import lm_eval
from lm_eval.models.huggingface import HFLM

lm = HFLM(pretrained="gpt2", device="cuda", batch_size=8)
results = lm_eval.simple_evaluate(model=lm, tasks=["hellaswag"], device="cuda:1")
again = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2", device="npu")
