#!/bin/bash
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
torchrun --nproc_per_node 8 train.py \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --bf16 True \
    --tf32 False \
    --output_dir out
python train.py --tf32=false --output_dir out
python train.py --tf32 False
trtexec --onnx=model.onnx --tf32
