# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
NGPUS := $(shell nvidia-smi -L | wc -l)

train:
# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
	torchrun --nproc_per_node=$$(nvidia-smi -L | wc -l) \
	    train.py
