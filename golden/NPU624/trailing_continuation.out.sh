#!/bin/bash
# A diffusers ControlNet script (its last flag ends with a backslash before a blank line), on chosen GPUs.
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
