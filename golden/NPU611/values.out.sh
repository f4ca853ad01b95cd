#!/bin/bash
# Converted: literal values HCCL accepts.
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=8 HCCL_ALGO="level0:NA;level1:ring"
HCCL_RDMA_TIMEOUT="18" HCCL_RDMA_SL=3 torchrun train.py
# Kept with a TODO: out of range, no counterpart, or computed.
# TODO(ascend-port): NPU612 [low] NCCL_IB_TIMEOUT kept (HCCL does not accept '23'); HCCL_RDMA_TIMEOUT takes an integer in [5, 20] (NCCL_IB_TIMEOUT: 1-31): set HCCL_RDMA_TIMEOUT by hand
export NCCL_IB_TIMEOUT=23
# TODO(ascend-port): NPU612 [low] NCCL_ALGO kept (HCCL does not accept 'Tree,Ring'); HCCL_ALGO takes "level0:NA;level1:<ring|H-D_R|NHR|NB|pipeline>" (NCCL_ALGO=Ring -> level1:ring): set HCCL_ALGO by hand
export NCCL_ALGO=Tree,Ring
# TODO(ascend-port): NPU612 [low] NCCL_BUFFSIZE kept (its value is not a literal); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
export NCCL_BUFFSIZE=$((4 * 1024 * 1024))
echo "buffer: $NCCL_BUFFSIZE"
# Lower-case names are shell variables of the script, not NCCL's.
nccl_buffsize=8388608
