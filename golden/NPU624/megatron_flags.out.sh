# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# TODO(ascend-port): NPU624 [medium] --no-persist-layer-norm added (Megatron-LM turns persist_layer_norm on unless told): needs Apex's persistent LayerNorm kernel (without Apex, Megatron's torch LayerNorm asserts it is off); torch.nn.LayerNorm runs instead
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --no-persist-layer-norm \
    --no-masked-softmax-fusion \
    --no-gradient-accumulation-fusion \
    --use-flash-attn \
    --distributed-backend hccl
