lm_eval --model hf --model_args pretrained=gpt2,device=cuda --tasks hellaswag
lm_eval --model hf --model_args "pretrained=gpt2,device=cuda:2" --device cuda
python -m lm_eval --model_args=pretrained=x,device=cuda
