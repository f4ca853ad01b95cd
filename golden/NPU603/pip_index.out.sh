#!/bin/bash
# TODO(ascend-port): NPU603 [low] torch==2.1.0+cu121 is a CUDA build: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
# TODO(ascend-port): NPU603 [low] torchvision==0.16.0+cu121 is a CUDA build: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
# TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
pip install torch==2.1.0+cu121 torchvision==0.16.0+cu121 --index-url https://download.pytorch.org/whl/cu121
# TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
pip3 install torch --extra-index-url=https://download.pytorch.org/whl/nightly/cu124
# TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
pip install torch==2.1.0 -f https://download.pytorch.org/whl/cu118/torch_stable.html
# CPU index and builds: unchanged
pip install torch==2.5.1+cpu --index-url https://download.pytorch.org/whl/cpu
