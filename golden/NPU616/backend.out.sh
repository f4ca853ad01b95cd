torchrun --nproc_per_node=8 train.py --backend hccl
python train.py --dist-backend=hccl --ddp_backend "hccl"
python train.py --dist_backend 'npu:hccl,cpu:gloo'
