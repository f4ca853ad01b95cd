#!/usr/bin/env bash
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True TORCH_NCCL_ASYNC_ERROR_HANDLING=1
CUDA_LAUNCH_BLOCKING=1 python debug.py
env CUDA_VISIBLE_DEVICES="${GPUS:-0}" python eval.py
echo "devices: ${CUDA_VISIBLE_DEVICES} ($CUDA_VISIBLE_DEVICES)"
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
    unset PYTORCH_NO_CUDA_MEMORY_CACHING
fi
run() {
    local CUDA_LAUNCH_BLOCKING=0
    RANKS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' ' ')
}
