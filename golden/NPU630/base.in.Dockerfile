# syntax=docker/dockerfile:1
ARG CUDA=12.1.0
FROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build
RUN pip install -r requirements.txt

FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.01-py3
COPY --from=build /app /app
