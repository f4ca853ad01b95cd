#!/usr/bin/env bash
set -euo pipefail

export ASCEND_RT_VISIBLE_DEVICES=0,1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True TORCH_HCCL_ASYNC_ERROR_HANDLING=1
ASCEND_LAUNCH_BLOCKING=1 python debug.py
env ASCEND_RT_VISIBLE_DEVICES="${GPUS:-0}" python eval.py
echo "devices: ${ASCEND_RT_VISIBLE_DEVICES} ($ASCEND_RT_VISIBLE_DEVICES)"
if [ -z "${ASCEND_RT_VISIBLE_DEVICES:-}" ]; then
    unset PYTORCH_NO_NPU_MEMORY_CACHING
fi
run() {
    local ASCEND_LAUNCH_BLOCKING=0
    RANKS=$(echo "$ASCEND_RT_VISIBLE_DEVICES" | tr ',' ' ')
}
