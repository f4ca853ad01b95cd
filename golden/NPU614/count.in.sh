#!/usr/bin/env bash
NGPUS=$(nvidia-smi -L | wc -l)
torchrun --nproc_per_node=$(nvidia-smi --list-gpus | wc -l) train.py
nvidia-smi --query-gpu=memory.used --format=csv,noheader
if ! command -v nvidia-smi >/dev/null; then
    echo "no GPU" >&2
fi
