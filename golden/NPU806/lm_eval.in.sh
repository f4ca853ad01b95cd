#!/bin/bash
lm_eval --model hf --model_args pretrained=gpt2 --tasks hellaswag --device cuda --batch_size 8
python -m lm_eval --model hf --tasks arc_easy --device=cuda:1
lm_eval --model hf --tasks arc_easy --device npu
python eval.py --device cuda
