import os

# TODO(ascend-port): NPU209 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT
os.environ["NCCL_DEBUG"] = "INFO"
# TODO(ascend-port): NPU209 [low] NCCL_P2P_DISABLE has no HCCL equivalent and no effect on NPU; the nearest is HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE (which link HCCL uses inside a server)
# TODO(ascend-port): NPU209 [low] NCCL_IB_DISABLE has no HCCL equivalent and no effect on NPU; HCCL uses the RoCE NICs configured with hccn_tool: nothing to set
if "NCCL_P2P_DISABLE" not in os.environ or "NCCL_IB_DISABLE" not in os.environ:
    os.environ["NCCL_P2P_DISABLE"] = "1"
# TODO(ascend-port): NPU209 [low] TORCH_NCCL_AVOID_RECORD_STREAMS has no HCCL equivalent and no effect on NPU; no Ascend setting is known to do the same
os.environ["TORCH_NCCL_AVOID_RECORD_STREAMS"] = "1"
# TODO(ascend-port): NPU209 [low] NCCL_TIMEOUT has no HCCL equivalent and no effect on NPU; the nearest are HCCL_CONNECT_TIMEOUT (link set-up, s) and HCCL_EXEC_TIMEOUT (collectives, s)
os.environ["NCCL_TIMEOUT"] = "1800"
