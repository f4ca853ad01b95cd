# TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
export TASK_QUEUE_ENABLE=2
# CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
export CPU_AFFINITY_CONF=1
# PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
torchrun --nproc_per_node=8 train.py --backend hccl
python train.py --dist-backend=hccl --ddp_backend "hccl"
python train.py --dist_backend 'npu:hccl,cpu:gloo'
