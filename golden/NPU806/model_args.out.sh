lm_eval --model hf --model_args pretrained=gpt2,device=npu:0 --tasks hellaswag
lm_eval --model hf --model_args "pretrained=gpt2,device=npu:2" --device npu:0
python -m lm_eval --model_args=pretrained=x,device=npu:0
