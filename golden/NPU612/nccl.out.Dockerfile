FROM python:3.11-slim
# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT
ENV NCCL_DEBUG=INFO
ENV OMP_NUM_THREADS=8
