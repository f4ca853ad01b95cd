#!/usr/bin/env bash
# Launch single-node multi-GPU training with torchrun.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export OMP_NUM_THREADS=8

cd "$(dirname "$0")/.."
NPROC=$(nvidia-smi -L | wc -l)
echo "launching on ${NPROC} GPUs"

torchrun --nproc_per_node=$NPROC train.py --device cuda --backend nccl --config configs/train.yaml "$@"
