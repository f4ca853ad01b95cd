python train.py --backend gloo
python compile.py --backend inductor
torchrun --rdzv-backend=c10d train.py
