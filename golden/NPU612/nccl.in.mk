export NCCL_DEBUG = WARN

run:
	NCCL_DEBUG=INFO python train.py
