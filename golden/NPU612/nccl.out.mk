# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT
export NCCL_DEBUG = WARN

run:
# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT
	NCCL_DEBUG=INFO python train.py
