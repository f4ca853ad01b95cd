FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
# TODO(ascend-port): NPU603 [low] torch==2.1.0+cu118 is a CUDA build: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
# TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)
RUN pip install --no-cache-dir torch==2.1.0+cu118 torchvision \
        --index-url https://download.pytorch.org/whl/cu118
RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu
