torchrun --nproc_per_node=8 train.py --backend nccl
python train.py --dist-backend=nccl --ddp_backend "nccl"
python train.py --dist_backend 'cuda:nccl,cpu:gloo'
