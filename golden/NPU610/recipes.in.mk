# Training entry points (make train GPUS=0,1).
GPUS ?= 0
export CUDA_VISIBLE_DEVICES ?= $(GPUS)

train:
	CUDA_LAUNCH_BLOCKING=1 python train.py
	@echo "visible: $(CUDA_VISIBLE_DEVICES) / $$CUDA_VISIBLE_DEVICES"

.PHONY: train
