#!/usr/bin/env bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
NNODES=${SLURM_NNODES:-2}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_SOCKET_IFNAME=eth0
python -m torch.distributed.run --nnodes=$NNODES --nproc_per_node=8 \
    --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py
