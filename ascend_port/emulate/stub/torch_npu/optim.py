"""torch_npu.optim under ascend-port emulate: the fused optimizers are the CPU references of
ascend_port/emulate/optimizers.py (torch_npu's updates, and the contract of its flat buffers: float32 or float16
parameters on the npu device, no sparse gradients, no set_to_none, the same tensors after the first step). Their
constructions and steps are counted in the exit report, and so are the contract errors they raise."""

from __future__ import annotations

import torch_npu
from torch_npu import _inventory, _report

_NAMES = frozenset(_inventory.inventory()["optim"])
_not_emulated = _inventory.module_getattr("torch_npu.optim", _NAMES)


def _optimizers():
    """optimizers.py, loaded when first used (as ops.py) after ops.py, whose error classes it raises."""
    torch_npu._load_sibling("ops")
    optimizers = torch_npu._load_sibling("optimizers")
    if optimizers is not None:
        optimizers.on_call = _report.record_call
        optimizers.on_violation = _report.record_violation
        optimizers.not_emulated = _report.not_emulated
    return optimizers


def __getattr__(name: str):
    if name in _NAMES:
        optimizers = _optimizers()
        if optimizers is not None and name in optimizers.__all__:
            globals()[name] = getattr(optimizers, name)
            return globals()[name]
    return _not_emulated(name)
