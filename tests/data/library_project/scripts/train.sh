#!/usr/bin/env bash
# Pretrain on one node, then fine-tune with accelerate.
set -euo pipefail
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_SOCKET_IFNAME=eth0
torchrun --nproc-per-node 8 train.py --steps 1000 "$@"
accelerate launch --mixed_precision bf16 finetune.py --steps 1000
