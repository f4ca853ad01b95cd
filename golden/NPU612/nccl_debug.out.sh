#!/bin/bash
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT
export NCCL_DEBUG=INFO
# TODO(ascend-port): NPU612 [low] NCCL_IB_DISABLE has no HCCL equivalent and no effect on NPU; HCCL uses the RoCE NICs configured with hccn_tool: nothing to set
# TODO(ascend-port): NPU612 [low] NCCL_P2P_DISABLE has no HCCL equivalent and no effect on NPU; the nearest is HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE (which link HCCL uses inside a server)
export NCCL_IB_DISABLE=1 NCCL_P2P_DISABLE=1
HCCL_BUFFSIZE=4 HCCL_ALGO="level0:NA;level1:ring" torchrun train.py
echo "NCCL_DEBUG is $NCCL_DEBUG"
