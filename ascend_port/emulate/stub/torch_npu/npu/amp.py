"""``torch.npu.amp`` under ascend-port emulate: GradScaler and autocast on the emulated npu device."""

from __future__ import annotations

import functools

import torch
from torch_npu import _report


class GradScaler(torch.amp.GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        _report.record_call("torch.npu.amp.GradScaler")
        super().__init__("npu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(torch.autocast):
    def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
        _report.record_call("torch.npu.amp.autocast")
        super().__init__("npu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return torch.amp.custom_fwd(fwd, device_type="npu", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    if bwd is None:
        return custom_bwd
    return torch.amp.custom_bwd(bwd, device_type="npu")
