"""ascend-port: port PyTorch projects from NVIDIA CUDA to Huawei Ascend NPUs (torch_npu)."""

__version__ = "0.1.0"
