#!/bin/bash
# A diffusers ControlNet script (its last flag ends with a backslash before a blank line), on chosen GPUs.
export CUDA_VISIBLE_DEVICES=0,1

accelerate launch train_controlnet.py \
 --pretrained_model_name_or_path=$MODEL_DIR \
 --gradient_checkpointing \
 --use_8bit_adam \
 --enable_xformers_memory_efficient_attention \

accelerate launch --multi_gpu train_mae_full.py \
  --mixed_precision "no" \
  --enable_xformers_memory_efficient_attention \
  "$@"

# In a quoted variable the flag is text the port does not edit.
TRAIN_ARGS="
    --enable_xformers_memory_efficient_attention \
    --seed=42 \
"
