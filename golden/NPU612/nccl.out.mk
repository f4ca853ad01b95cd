# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent; CANN logs with ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info) and ASCEND_SLOG_PRINT_TO_STDOUT=1
export NCCL_DEBUG = WARN

run:
# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent; CANN logs with ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info) and ASCEND_SLOG_PRINT_TO_STDOUT=1
	NCCL_DEBUG=INFO python train.py
