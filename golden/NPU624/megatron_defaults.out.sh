#!/bin/bash
# Megatron-LM's fusions that are on unless told get their `--no-...` flag where the script does not give it
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

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

# TODO(ascend-port): NPU624 [medium] --no-gradient-accumulation-fusion added (Megatron-LM turns gradient_accumulation_fusion on unless told): needs fused_weight_gradient_mlp_cuda, Apex's CUDA extension (Megatron raises RuntimeError without it); Megatron's weight-gradient matmul in PyTorch runs instead
# TODO(ascend-port): NPU624 [medium] --no-rope-fusion added (Megatron-LM turns apply_rope_fusion on unless told): needs the fused RoPE of Transformer Engine or Apex (Megatron raises ValueError without them); Megatron's RoPE in PyTorch runs instead
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    --no-gradient-accumulation-fusion \
    --no-rope-fusion \
    ${GPT_MODEL_ARGS[@]} \
    --distributed-backend hccl

# a flag the script gives anywhere (here in an array) is not added again
# TODO(ascend-port): NPU624 [medium] --no-gradient-accumulation-fusion added (Megatron-LM turns gradient_accumulation_fusion on unless told): needs fused_weight_gradient_mlp_cuda, Apex's CUDA extension (Megatron raises RuntimeError without it); Megatron's weight-gradient matmul in PyTorch runs instead
# TODO(ascend-port): NPU624 [medium] --no-rope-fusion added (Megatron-LM turns apply_rope_fusion on unless told): needs the fused RoPE of Transformer Engine or Apex (Megatron raises ValueError without them); Megatron's RoPE in PyTorch runs instead
python "$MEGATRON/pretrain_bert.py" --no-gradient-accumulation-fusion --no-rope-fusion --num-layers 2 --no-persist-layer-norm

echo pretrain_gpt.py  # names it, runs nothing
