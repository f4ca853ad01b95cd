FROM python:3.11
ENV HCCL_BUFFSIZE=8 HCCL_SOCKET_IFNAME=eth0
ENV HCCL_ALGO "level0:NA;level1:ring"
# TODO(ascend-port): NPU612 [low] NCCL_IB_TIMEOUT kept (HCCL does not accept '22'); HCCL_RDMA_TIMEOUT takes an integer in [5, 20] (NCCL_IB_TIMEOUT: 1-31): set HCCL_RDMA_TIMEOUT by hand
# TODO(ascend-port): NPU612 [low] NCCL_BUFFSIZE kept (its value is not a literal); HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes): set HCCL_BUFFSIZE by hand
ENV NCCL_IB_TIMEOUT="22" \
    NCCL_BUFFSIZE=$BUF
# TODO(ascend-port): NPU612 [low] NCCL_ALGO kept (its value is not a literal); HCCL_ALGO takes "level0:NA;level1:<ring|H-D_R|NHR|NB|pipeline>" (NCCL_ALGO=Ring -> level1:ring): set HCCL_ALGO by hand
ENV NCCL_ALGO Tree Ring
CMD ["python", "train.py"]
