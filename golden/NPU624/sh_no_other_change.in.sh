#!/bin/bash
# No other change in this script: the flag stays.
accelerate launch train_text_to_image.py \
  --enable_xformers_memory_efficient_attention \
  --output_dir="sd-model"
