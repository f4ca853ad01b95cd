#!/bin/bash
export TASK_QUEUE_ENABLE=1
export CPU_AFFINITY_CONF=2
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:False
export CUDA_VISIBLE_DEVICES=0,1
deepspeed --num_gpus 2 train.py --deepspeed ds_config.json
