import torch

BACKEND_EMPTY_CACHE = {
    "cuda": torch.cuda.empty_cache,
    "xpu": torch.xpu.empty_cache,
    "cpu": None,
    "mps": torch.mps.empty_cache,
    "default": None,
}
BACKEND_DEVICE_COUNT = {"mps": lambda: 1, "cpu": lambda: 0, "cuda": torch.cuda.device_count}
BACKEND_SUPPORTS_TRAINING = {"cuda": True, "xpu": True, "cpu": True, "mps": False, "default": True}
CONF = {
    "cpu": {"num_requests": 50},
    "mps": {"num_requests": 50},
    "cuda": {"num_requests": 100},
}
