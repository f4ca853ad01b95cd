#!/usr/bin/env bash
npu-smi info
if npu-smi info > /dev/null 2>&1; then
    echo "accelerator found"
fi
sudo npu-smi info
npu-smi info | tee gpu.log
