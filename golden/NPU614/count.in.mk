NGPUS := $(shell nvidia-smi -L | wc -l)

train:
	torchrun --nproc_per_node=$$(nvidia-smi -L | wc -l) \
	    train.py
