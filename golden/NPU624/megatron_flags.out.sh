# TODO(ascend-port): NPU624 [medium] --no-persist-layer-norm added (Megatron-LM turns persist_layer_norm on unless told): needs Apex's persistent LayerNorm kernel (without Apex, Megatron's torch LayerNorm asserts it is off); torch.nn.LayerNorm runs instead
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --no-persist-layer-norm \
    --no-masked-softmax-fusion \
    --no-gradient-accumulation-fusion \
    --use-flash-attn \
    --distributed-backend hccl
