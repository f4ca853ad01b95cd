#!/bin/bash
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export ASCEND_RT_VISIBLE_DEVICES=0,1
export MODEL_NAME="runwayml/stable-diffusion-v1-5"

# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
accelerate launch --mixed_precision="fp16" train_text_to_image.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --resolution=512 --center_crop --random_flip \
  --output_dir="sd-model"

if [ -n "$FAST" ]; then
  # TODO(ascend-port): NPU624 [medium] --enable-xformers-memory-efficient-attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
  python train_dreambooth.py --train_batch_size 1
fi
# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
python train_lora.py --resolution=512
# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
python infer.py 2>&1 | tee log.txt
# TODO(ascend-port): NPU624 [medium] --enable_xformers_memory_efficient_attention removed: needs xformers, which has no NPU build (diffusers' training scripts raise ValueError without it); diffusers' default attention (torch's scaled_dot_product_attention) runs instead
python infer.py>log2.txt
echo "--enable_xformers_memory_efficient_attention"  # quoted text stays
