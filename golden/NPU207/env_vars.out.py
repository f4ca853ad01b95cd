import os

os.environ["TORCH_HCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ.setdefault("TORCH_HCCL_BLOCKING_WAIT", "0")
heartbeat = int(os.getenv("TORCH_HCCL_HEARTBEAT_TIMEOUT_SEC", "480"))
env = {"TORCH_HCCL_ASYNC_ERROR_HANDLING": "1", "TORCH_HCCL_TRACE_BUFFER_SIZE": "2000"}
patched = {"torch_nccl_dump_on_timeout": "1"}


def describe():
    """Set TORCH_NCCL_ASYNC_ERROR_HANDLING to 1 before launching."""
    return "TORCH_HCCL_ASYNC_ERROR_HANDLING"
