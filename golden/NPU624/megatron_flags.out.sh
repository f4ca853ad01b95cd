torchrun --nproc_per_node 8 pretrain_gpt.py \
    --no-masked-softmax-fusion \
    --no-gradient-accumulation-fusion \
    --use-flash-attn \
    --distributed-backend hccl
