#!/bin/bash
lm_eval --model hf --model_args pretrained=gpt2 --tasks hellaswag --device npu:0 --batch_size 8
python -m lm_eval --model hf --tasks arc_easy --device=npu:1
lm_eval --model hf --tasks arc_easy --device npu:0
python eval.py --device npu
