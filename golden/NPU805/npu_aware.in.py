import torch
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel

dp_factory = {"cuda": MMDataParallel, "cpu": MMDataParallel}


def build_dp(model, device="cuda", *args, **kwargs):
    if device == "npu":
        from mmcv.device.npu import NPUDataParallel

        dp_factory["npu"] = NPUDataParallel
    return dp_factory[device](model, *args, **kwargs)
