"""torch_npu 2.14.0's public names (ascend_port/data/torch_npu_api.json), and the stand-ins for those not emulated:
calling one raises NotImplementedError; a name the inventory lacks raises AttributeError, as the real package would."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from torch_npu import _report

API_ENV = "ASCEND_PORT_EMULATE_API"


@cache
def inventory() -> dict:
    path = os.environ.get(API_ENV) or str(Path(__file__).resolve().parents[3] / "data" / "torch_npu_api.json")
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


class NotEmulated:
    """A torch_npu name that exists but is not emulated: calling it (or anything under it) raises."""

    def __init__(self, qualname: str, children: frozenset[str] = frozenset()):
        self._qualname = qualname
        self._children = children

    def __call__(self, *args, **kwargs):
        raise _report.not_emulated(self._qualname)

    def __getattr__(self, name: str):
        if name.startswith("__") or name not in self._children:
            raise AttributeError(f"{self._qualname!r} has no attribute {name!r}")
        return NotEmulated(f"{self._qualname}.{name}")

    def __repr__(self) -> str:
        return f"<{self._qualname}: not emulated by ascend-port emulate>"


def module_getattr(qualname: str, names, emulated: dict | None = None):
    """A module ``__getattr__``: ``emulated`` names first, then the inventory's ``names`` (not emulated)."""
    names = frozenset(names)

    def __getattr__(name: str):
        if emulated and name in emulated:
            return emulated[name]
        if name in names:
            return NotEmulated(f"{qualname}.{name}")
        raise AttributeError(f"module {qualname!r} has no attribute {name!r}")

    return __getattr__
