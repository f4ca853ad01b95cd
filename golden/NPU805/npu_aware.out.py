import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel

dp_factory = {"cuda": MMDataParallel, "npu": MMDataParallel, "cpu": MMDataParallel}


def build_dp(model, device="cuda", *args, **kwargs):
    if device == "npu":
        from mmcv.device.npu import NPUDataParallel

        dp_factory["npu"] = NPUDataParallel
    return dp_factory[device](model, *args, **kwargs)
