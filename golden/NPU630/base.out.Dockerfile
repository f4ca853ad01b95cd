# syntax=docker/dockerfile:1
ARG CUDA=12.1.0
# TODO(ascend-port): NPU630 [low] CUDA base image nvidia/cuda:${CUDA}-devel-ubuntu22.04: use an Ascend CANN image (ascendai/cann:<cann>-<chip>-<os>-py<ver>, e.g. ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11, or an Ascend PyTorch image built on it); check that the CANN version matches your NPU driver and torch_npu release
FROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build
RUN pip install -r requirements.txt

# TODO(ascend-port): NPU630 [low] CUDA base image nvcr.io/nvidia/pytorch:24.01-py3: use an Ascend CANN image (ascendai/cann:<cann>-<chip>-<os>-py<ver>, e.g. ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11, or an Ascend PyTorch image built on it); check that the CANN version matches your NPU driver and torch_npu release
FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.01-py3
COPY --from=build /app /app
