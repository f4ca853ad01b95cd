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

# fused ops: reference implementations in ascend_port/emulate/ops.py (loaded when first used), called as the target
# release's op is called: bound to the schema its wheel registers, on npu tensors only

FUSED_OPS = (
    "npu_fusion_attention",
    "npu_rms_norm",
    "npu_gemma_rms_norm",
    "npu_rotary_mul",
    "npu_swiglu",
    "npu_geglu",
    "npu_scaled_masked_softmax",
)
_API = _inventory.inventory()


def _tensors(values) -> list:
    found = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found += _tensors(value)
    return found


def _check_devices(name: str, values: list) -> None:
    """The device check of the real op: registered for the npu only (CPU tensors find no kernel), and all its tensor
    arguments on one device (op-plugin's generated device check). ``values``: its Tensor arguments (a 0-d tensor for
    a float or int argument is a number, not one of them)."""
    tensors = _tensors(values)
    devices = sorted({str(t.device) for t in tensors})
    error: RuntimeError | None = None
    if tensors and not any(t.device.type == "npu" for t in tensors):
        error = NotImplementedError(
            f"Could not run 'npu::{name}' with arguments from the '{tensors[0].device.type.upper()}' backend: "
            f"torch_npu.{name} runs on npu tensors only, got tensors on {', '.join(devices)}"
        )
    elif len(devices) > 1:
        error = RuntimeError(
            f"torch_npu.{name}: Expected all tensors to be on the same device, but found at least two devices, "
            f"{' and '.join(devices)}!"
        )
    if error is not None:
        _report.record_violation(f"torch_npu.{name}", error)
        raise error


def _check_release(name: str, arguments: dict) -> None:
    """What the target release's docs rule out although its schema takes it: the varlen layout TND before the docs
    of npu_fusion_attention gained actual_seq_qlen (2.2.0.post2 registers the argument but documents BSH, SBH, BSND
    and BNSD only)."""
    doc = _API.get("signatures", {}).get(name)
    if (
        name == "npu_fusion_attention"
        and doc
        and "actual_seq_qlen" not in doc
        and arguments.get("input_layout") == "TND"
    ):
        raise _load_sibling("ops").OpContractError(
            f"{name}: input_layout TND is not supported by torch_npu {_API['torch_npu_version']} "
            "(its docs list BSH, SBH, BSND, BNSD)"
        )


def _fused(name: str):
    def op(*args, **kwargs):
        _report.record_call(f"torch_npu.{name}")
        ops = _load_sibling("ops")
        implementation = getattr(ops, name, None) if ops is not None else None
        if implementation is None:
            raise _report.not_emulated(f"torch_npu.{name}")
        ops.note = _report.record_note  # what the docs leave undefined (fully masked rows) goes to the report
        from torch_npu import _schema

        schema = _API.get("schemas", {}).get(name)
        try:
            arguments = _schema.bind(schema, args, kwargs) if schema else None
            if arguments is not None:
                _check_release(name, arguments)
                types = _schema.parse(schema)[2]
                _check_devices(name, [v for n, v in arguments.items() if types[n].startswith("Tensor")])
            else:
                _check_devices(name, [*args, *kwargs.values()])
            # the reference's own aten ops are not the program's (a real fused op is one kernel): no run hazards
            paused = torch._ascend_port_emulate_native.pause_op_stats(True)
            try:
                if schema:
                    return _schema.call(implementation, schema, args, kwargs, arguments)
                return implementation(*args, **kwargs)
            finally:
                torch._ascend_port_emulate_native.pause_op_stats(paused)
        except (ops.OpContractError, ops.OpTypeError, _schema.SchemaError) as error:
            _report.record_violation(f"torch_npu.{name}", error)
            raise

    op.__name__ = op.__qualname__ = name
    return op


# The fused ops the target release has (a release without npu_gemma_rms_norm raises AttributeError for it)
_emulated = {name: _fused(name) for name in FUSED_OPS if name in _API["ops"]}
_emulated.update(
    {
        "npu": npu,
        "distributed": distributed,
        "optim": optim,
        "profiler": profiler,
    }
)
for _name in FUSED_OPS:
    if _name in _emulated:
        globals()[_name] = _emulated[_name]

__getattr__ = _inventory.module_getattr("torch_npu", _API["ops"], _emulated)
