#!/usr/bin/env bash
nvidia-smi
if nvidia-smi > /dev/null 2>&1; then
    echo "accelerator found"
fi
sudo nvidia-smi
/usr/bin/nvidia-smi | tee gpu.log
