#!/bin/bash
# The project's own --xformers and --fp8: a single script does not show what its program does without them
# (the project step reads that in its Python code: tests/test_launch_flags.py), so they stay.
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
torchrun --nproc_per_node 8 train.py --dist-backend hccl \
    --xformers \
    --fp8
