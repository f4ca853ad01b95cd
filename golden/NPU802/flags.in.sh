#!/bin/bash
torchrun --nproc_per_node 8 train.py \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --bf16 True \
    --tf32 True \
    --output_dir out
python train.py --tf32=true --output_dir out
python train.py --tf32 False
trtexec --onnx=model.onnx --tf32
