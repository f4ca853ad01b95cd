#!/bin/bash
# A diffusers ControlNet script (its last flag ends with a backslash before a blank line), on chosen GPUs.
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export ASCEND_RT_VISIBLE_DEVICES=0,1

# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
accelerate launch train_controlnet.py \
 --pretrained_model_name_or_path=$MODEL_DIR \
 --gradient_checkpointing \
 --use_8bit_adam \

# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
accelerate launch --multi_gpu train_mae_full.py \
  --mixed_precision "no" \
  "$@"

# In a quoted variable the flag is text the port does not edit.
TRAIN_ARGS="
    --enable_xformers_memory_efficient_attention \
    --seed=42 \
"
