#!/usr/bin/env bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# HCCL_CONNECT_TIMEOUT=1200: seconds HCCL waits for the other hosts to connect (default 120)
export HCCL_CONNECT_TIMEOUT=1200
# HCCL_EXEC_TIMEOUT=1800: seconds a rank waits for the others at a collective (a slow checkpoint save)
export HCCL_EXEC_TIMEOUT=1800
NNODES=${SLURM_NNODES:-2}
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_SOCKET_IFNAME=eth0
python -m torch.distributed.run --nnodes=$NNODES --nproc_per_node=8 \
    --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py
