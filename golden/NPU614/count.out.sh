#!/usr/bin/env bash
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
NGPUS=$(nvidia-smi -L | wc -l)
# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
torchrun --nproc_per_node=$(nvidia-smi --list-gpus | wc -l) train.py
# TODO(ascend-port): NPU614 [low] nvidia-smi --query-gpu=memory.used --format=csv,noheader: npu-smi has other options and output; see `npu-smi info -h`
nvidia-smi --query-gpu=memory.used --format=csv,noheader
# TODO(ascend-port): NPU614 [low] looks for nvidia-smi; the Ascend tool is npu-smi (`npu-smi info`)
if ! command -v nvidia-smi >/dev/null; then
    echo "no GPU" >&2
fi
