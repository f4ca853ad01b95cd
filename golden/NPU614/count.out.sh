#!/usr/bin/env bash
# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
NGPUS=$(nvidia-smi -L | wc -l)
# TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with `python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`
torchrun --nproc_per_node=$(nvidia-smi --list-gpus | wc -l) train.py
# TODO(ascend-port): NPU614 [low] nvidia-smi --query-gpu=memory.used --format=csv,noheader: npu-smi has other options and output; see `npu-smi info -h`
nvidia-smi --query-gpu=memory.used --format=csv,noheader
# TODO(ascend-port): NPU614 [low] looks for nvidia-smi; the Ascend tool is npu-smi (`npu-smi info`)
if ! command -v nvidia-smi >/dev/null; then
    echo "no GPU" >&2
fi
