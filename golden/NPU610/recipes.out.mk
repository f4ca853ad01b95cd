# Training entry points (make train GPUS=0,1).
GPUS ?= 0
export ASCEND_RT_VISIBLE_DEVICES ?= $(GPUS)

train:
	ASCEND_LAUNCH_BLOCKING=1 python train.py
	@echo "visible: $(ASCEND_RT_VISIBLE_DEVICES) / $$ASCEND_RT_VISIBLE_DEVICES"

.PHONY: train
