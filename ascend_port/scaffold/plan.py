"""What one scaffold is made of (the op, its C++ function, the project's pure-torch version of it, where it goes)
and its names: the folder's (`causal_conv1d_fwd`, `selective_scan_fwd` for `selective_scan_cuda.fwd`), the
operator type's (`CausalConv1dFwd`), the package's and torch namespace's (`causal_conv1d_fwd_npu`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ascend_port.scaffold.fallback import Fallback, find_fallback
from ascend_port.scaffold.ops import ExtensionOp
from ascend_port.scaffold.signature import TENSOR, Param, Signature

# Op names that say nothing without their module (`selective_scan_cuda.fwd`): the scaffold is named for both.
GENERIC_NAMES = {"fwd", "bwd", "forward", "backward", "run", "apply", "call", "op", "compute", "kernel", "launch"}


class ScaffoldError(Exception):
    """The scaffold cannot be written (files exist, the op has no readable C++ function); the message says why."""


def op_id(op: ExtensionOp) -> str:
    """The scaffold's name: the op's, with its module's stem where the op's alone is generic."""
    name = re.sub(r"\W", "_", op.name)
    if name.lower() in GENERIC_NAMES or len(name) <= 3:
        stem = re.sub(r"_cuda(_\w+)?$", "", op.module.rsplit(".", 1)[-1]).strip("_") or "ext"
        name = f"{stem}_{name}"
    return name


def op_type(name: str) -> str:
    """CamelCase operator type, as Ascend C names operators (`causal_conv1d_fwd` -> `CausalConv1dFwd`)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


@dataclass(frozen=True)
class Plan:
    """What one scaffold is made of."""

    op: ExtensionOp
    signature: Signature
    fallback: Fallback | None
    out: Path
    top: Path

    @property
    def name(self) -> str:
        return op_id(self.op)

    @property
    def package(self) -> str:
        return f"{self.name}_npu"

    @property
    def inputs(self) -> list[Param]:
        return [p for p in self.signature.params if p.kind == TENSOR and not p.written]

    @property
    def outputs(self) -> list[str]:
        written = [p.name for p in self.signature.params if p.written]
        return written or ["out"]

    @property
    def attrs(self) -> list[Param]:
        return [p for p in self.signature.params if p.kind != TENSOR]


def plan(top: Path, op: ExtensionOp, out: Path | None) -> Plan:
    if op.signature is None:
        raise ScaffoldError(
            f"{op.qualified}: the C++ function bound to it (in {op.binding}) was not found or not read: "
            "scaffold needs its parameters"
        )
    name = op_id(op)
    return Plan(op, op.signature, find_fallback(top, op), out or top / "ascend_ops" / name, top)
