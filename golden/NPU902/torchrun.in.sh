#!/bin/bash
# Fine-tune on one host.
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
torchrun --nproc_per_node 4 train.py --backend nccl
