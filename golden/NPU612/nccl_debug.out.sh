#!/bin/bash
# TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent; CANN logs with ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info) and ASCEND_SLOG_PRINT_TO_STDOUT=1
export NCCL_DEBUG=INFO
# TODO(ascend-port): NPU612 [low] NCCL_IB_DISABLE is an NCCL setting that HCCL ignores: drop it or find the HCCL_* counterpart
# TODO(ascend-port): NPU612 [low] NCCL_P2P_DISABLE is an NCCL setting that HCCL ignores: drop it or find the HCCL_* counterpart
export NCCL_IB_DISABLE=1 NCCL_P2P_DISABLE=1
# TODO(ascend-port): NPU612 [low] NCCL_BUFFSIZE: HCCL_BUFFSIZE is the counterpart but in MB (NCCL_BUFFSIZE is in bytes): convert the value
# TODO(ascend-port): NPU612 [low] NCCL_ALGO: HCCL_ALGO is the counterpart but has its own value syntax: rewrite the value by hand
NCCL_BUFFSIZE=4194304 NCCL_ALGO=Ring torchrun train.py
echo "NCCL_DEBUG is $NCCL_DEBUG"
