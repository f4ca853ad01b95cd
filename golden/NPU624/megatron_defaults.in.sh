#!/bin/bash
# Megatron-LM's fusions that are on unless told get their `--no-...` flag where the script does not give it
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

DISTRIBUTED_ARGS=(
    --nproc_per_node 8
    --nnodes 1
)

GPT_MODEL_ARGS=(
    --num-layers 24
    --hidden-size 2048
    --position-embedding-type rope
    --no-masked-softmax-fusion
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    --distributed-backend nccl

# a flag the script gives anywhere (here in an array) is not added again
python "$MEGATRON/pretrain_bert.py" --num-layers 2 --no-persist-layer-norm

echo pretrain_gpt.py  # names it, runs nothing
