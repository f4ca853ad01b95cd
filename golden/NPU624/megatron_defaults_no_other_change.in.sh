#!/bin/bash
# a script the port edits for nothing else stays as it is
torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --bf16
