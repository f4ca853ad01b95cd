"""Stand-in for torch_npu under ``ascend-port emulate``: importing it makes ``npu`` a device backed by host memory
(idempotent), with ``torch.npu`` / ``torch_npu.npu`` behaving as on CPU. Never imports a real torch_npu.

The target torch_npu's names (2.14.0 unless `ascend-port emulate --torch-npu VERSION`) that are not emulated raise
NotImplementedError when called; names that release lacks raise AttributeError."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch
from torch_npu import _inventory, _report

__version__ = f"{_inventory.inventory()['torch_npu_version']}+emulated"
_EMULATE_DIR = Path(__file__).resolve().parents[2]  # ascend_port/emulate


def _load_sibling(name: str):
    """ascend_port/emulate/<name>.py, loaded by path: the target environment need not have ascend_port."""
    module_name = f"_ascend_port_emulate_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = _EMULATE_DIR / f"{name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


from torch_npu import npu  # noqa: E402

_load_sibling("device").install(npu)
torch.npu = npu  # torch._register_device_module did this too

from torch_npu import distributed, optim, profiler  # noqa: E402

distributed._register_hccl()
from torch_npu import _compile  # noqa: E402,F401  (installs torch.compile support: npu graphs run eagerly)

# fused ops: reference implementations in ascend_port/emulate/ops.py (loaded when first used)

FUSED_OPS = ("npu_fusion_attention", "npu_rms_norm", "npu_gemma_rms_norm", "npu_rotary_mul", "npu_swiglu")


def _fused(name: str):
    def op(*args, **kwargs):
        _report.record_call(f"torch_npu.{name}")
        ops = _load_sibling("ops")
        implementation = getattr(ops, name, None) if ops is not None else None
        if implementation is None:
            raise _report.not_emulated(f"torch_npu.{name}")
        try:
            return implementation(*args, **kwargs)
        except (ops.OpContractError, ops.OpTypeError) as error:
            _report.record_violation(f"torch_npu.{name}", error)
            raise

    op.__name__ = op.__qualname__ = name
    return op


_emulated = {name: _fused(name) for name in FUSED_OPS}
_emulated.update(
    {
        "npu": npu,
        "distributed": distributed,
        "optim": optim,
        "profiler": profiler,
    }
)
for _name in FUSED_OPS:
    globals()[_name] = _emulated[_name]

__getattr__ = _inventory.module_getattr("torch_npu", _inventory.inventory()["ops"], _emulated)
