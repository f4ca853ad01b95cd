#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1
export MODEL_NAME="runwayml/stable-diffusion-v1-5"

accelerate launch --mixed_precision="fp16" train_text_to_image.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --enable_xformers_memory_efficient_attention \
  --resolution=512 --center_crop --random_flip \
  --output_dir="sd-model"

if [ -n "$FAST" ]; then
  python train_dreambooth.py --enable-xformers-memory-efficient-attention --train_batch_size 1
fi
python train_lora.py --resolution=512 \
  --enable_xformers_memory_efficient_attention
python infer.py --enable_xformers_memory_efficient_attention 2>&1 | tee log.txt
python infer.py --enable_xformers_memory_efficient_attention>log2.txt
echo "--enable_xformers_memory_efficient_attention"  # quoted text stays
