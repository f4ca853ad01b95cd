import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass

BACKEND_EMPTY_CACHE = {
    "cuda": torch.cuda.empty_cache,
    "npu": torch.npu.empty_cache if hasattr(torch, "npu") else None,
    "xpu": torch.xpu.empty_cache,
    "cpu": None,
    "mps": torch.mps.empty_cache,
    "default": None,
}
BACKEND_DEVICE_COUNT = {"mps": lambda: 1, "cpu": lambda: 0, "cuda": torch.cuda.device_count, "npu": torch.npu.device_count if hasattr(torch, "npu") else None}
BACKEND_SUPPORTS_TRAINING = {"cuda": True, "npu": True, "xpu": True, "cpu": True, "mps": False, "default": True}
CONF = {
    "cpu": {"num_requests": 50},
    "mps": {"num_requests": 50},
    "cuda": {"num_requests": 100},
    "npu": {"num_requests": 100},
}
