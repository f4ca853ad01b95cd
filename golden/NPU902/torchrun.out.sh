#!/bin/bash
# Fine-tune on one host.
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
set -e

export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
torchrun --nproc_per_node 4 train.py --backend hccl
