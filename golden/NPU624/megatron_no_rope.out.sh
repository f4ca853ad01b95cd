# no RoPE: Megatron-LM turns rope fusion off itself, so no --no-rope-fusion
export ASCEND_RT_VISIBLE_DEVICES=0
# TODO(ascend-port): NPU624 [medium] --no-gradient-accumulation-fusion added (Megatron-LM turns gradient_accumulation_fusion on unless told): needs fused_weight_gradient_mlp_cuda, Apex's CUDA extension (Megatron raises RuntimeError without it); Megatron's weight-gradient matmul in PyTorch runs instead
# TODO(ascend-port): NPU624 [medium] --no-masked-softmax-fusion added (Megatron-LM turns masked_softmax_fusion on unless told): needs Megatron's CUDA softmax kernels (scaled_masked_softmax_cuda), imported at the first fp16/bf16 step; torch.softmax runs instead
# TODO(ascend-port): NPU624 [medium] --no-persist-layer-norm added (Megatron-LM turns persist_layer_norm on unless told): needs Apex's persistent LayerNorm kernel (without Apex, Megatron's torch LayerNorm asserts it is off); torch.nn.LayerNorm runs instead
python pretrain_bert.py --no-gradient-accumulation-fusion --no-masked-softmax-fusion --no-persist-layer-norm --num-layers 2 --position-embedding-type learned_absolute --distributed-backend hccl
