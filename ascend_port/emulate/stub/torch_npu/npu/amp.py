"""``torch.npu.amp`` under ascend-port emulate: GradScaler and autocast on the emulated npu device."""

from __future__ import annotations

import functools

import torch
from torch.amp.grad_scaler import OptState
from torch_npu import _report


class GradScaler(torch.amp.GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        _report.record_call("torch.npu.amp.GradScaler")
        super().__init__("npu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    def step(self, optimizer, *args, **kwargs):
        """As torch_npu's GradScaler.step (torch_npu/npu/amp/grad_scaler.py, every release 2.1.0 to 2.14.0): an
        optimizer that says ``_step_supports_amp_scaling`` (torch.optim's ``fused=True`` ones) is stepped with
        ``grad_scaler=self``, the contract torch itself has since replaced; their ``step()`` takes no such argument,
        so on the device this raises TypeError where torch.amp.GradScaler would unscale in the fused kernel."""
        if not self._enabled or not getattr(optimizer, "_step_supports_amp_scaling", False):
            return super().step(optimizer, *args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        result = optimizer.step(*args, **dict(kwargs, grad_scaler=self))
        state["stage"] = OptState.STEPPED
        return result


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
