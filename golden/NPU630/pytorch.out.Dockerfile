# TODO(ascend-port): NPU630 [low] CUDA base image pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime: use an Ascend CANN image (ascendai/cann:<cann>-<chip>-<os>-py<ver>, e.g. ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11, or an Ascend PyTorch image built on it); check that the CANN version matches your NPU driver and torch_npu release
FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
WORKDIR /app
