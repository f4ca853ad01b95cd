# no RoPE: Megatron-LM turns rope fusion off itself, so no --no-rope-fusion
export CUDA_VISIBLE_DEVICES=0
python pretrain_bert.py --num-layers 2 --position-embedding-type learned_absolute --distributed-backend nccl
