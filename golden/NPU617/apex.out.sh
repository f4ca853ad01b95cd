#!/bin/bash
# TODO(ascend-port): NPU617 [low] NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend: use Ascend's apex (gitcode.com/Ascend/apex, built for torch_npu), or torch.autocast('npu') and torch.optim instead
git clone https://github.com/NVIDIA/apex
cd apex
# TODO(ascend-port): NPU617 [low] NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend: use Ascend's apex (gitcode.com/Ascend/apex, built for torch_npu), or torch.autocast('npu') and torch.optim instead
pip install -v --disable-pip-version-check --no-cache-dir --no-build-isolation \
    --global-option="--cpp_ext" --global-option="--cuda_ext" ./
# TODO(ascend-port): NPU617 [low] NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend: use Ascend's apex (gitcode.com/Ascend/apex, built for torch_npu), or torch.autocast('npu') and torch.optim instead
pip install -v --no-build-isolation --config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./
