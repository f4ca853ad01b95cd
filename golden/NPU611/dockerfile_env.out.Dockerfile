FROM python:3.11
# TODO(ascend-port): NPU612 [low] NCCL_BUFFSIZE kept (its value is not checked here); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
ENV HCCL_SOCKET_IFNAME=eth0 NCCL_BUFFSIZE=8388608
RUN export HCCL_ALGO="level0:NA;level1:ring" && python train.py
