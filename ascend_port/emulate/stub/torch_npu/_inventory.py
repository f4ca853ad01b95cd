"""The target torch_npu's public names ($ASCEND_PORT_EMULATE_API, written by the runner for `--torch-npu VERSION`;
else ascend_port/data/torch_npu_api.json), and the stand-ins for those not emulated:
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


def _missing(qualname: str, name: str, owner: str = "") -> AttributeError:
    """The AttributeError of a name the target release lacks (``owner``: "module " for a module), reported."""
    if not name.startswith("_"):  # not the interpreter's own probes (__path__, __file__, ...)
        _report.record_absent(f"{qualname}.{name}")
    return AttributeError(f"{owner}{qualname!r} has no attribute {name!r}")


def _member(qualname: str, children: frozenset[str], name: str) -> NotEmulated:
    """A member of a name that is not emulated: not emulated either, or missing."""
    if name.startswith("__") or name not in children:
        raise _missing(qualname, name)
    return NotEmulated(f"{qualname}.{name}")


class NotEmulated:
    """A torch_npu function or object that exists but is not emulated: calling it (or a member) raises."""

    def __init__(self, qualname: str, children: frozenset[str] = frozenset()):
        self._qualname = qualname
        self._children = children

    def __call__(self, *args, **kwargs):
        raise _report.not_emulated(self._qualname)

    def __getattr__(self, name: str):
        return _member(self._qualname, self._children, name)

    def __repr__(self) -> str:
        return f"<{self._qualname}: not emulated by ascend-port emulate>"


class NotEmulatedClass(type):
    """A torch_npu class that exists but is not emulated: a real class, so annotations (`NPUGraph | None`),
    isinstance and subclassing work; making an instance or using a member raises."""

    _qualname: str
    _children: frozenset[str]

    def __call__(cls, *args, **kwargs):
        raise _report.not_emulated(cls._qualname)

    def __getattr__(cls, name: str):
        return _member(cls._qualname, cls._children, name)

    def __repr__(cls) -> str:
        return f"<class {cls._qualname}: not emulated by ascend-port emulate>"


def not_emulated(qualname: str, children: frozenset[str] = frozenset()) -> object:
    """The stand-in of a name that exists but is not emulated: a class for a class name (CamelCase, as torch_npu
    names its classes), else a callable object."""
    name = qualname.rpartition(".")[2]
    if name[:1].isupper() and not name.isupper():
        namespace = {"_qualname": qualname, "_children": children, "__module__": qualname.rpartition(".")[0]}
        return NotEmulatedClass(name, (), namespace)
    return NotEmulated(qualname, children)


def members(kind: str, name: str) -> frozenset[str]:
    """The public members of class ``name`` of module kind ``kind`` (``npu``, ``npu.graphs``) or a submodule of it,
    where the target's inventory lists them."""
    found: set[str] = set()
    for key, names in inventory().get("members", {}).items():
        module, _, cls = key.partition(":")
        if cls == name and (module == kind or module.startswith(kind + ".")):
            found.update(names)
    return frozenset(found)


def module_getattr(qualname: str, names, emulated: dict | None = None):
    """A module ``__getattr__``: ``emulated`` names first, then the inventory's ``names`` (not emulated)."""
    names = frozenset(names)
    kind = qualname.removeprefix("torch_npu.")

    def __getattr__(name: str):
        if emulated and name in emulated:
            return emulated[name]
        if name in names:
            return not_emulated(f"{qualname}.{name}", members(kind, name))
        raise _missing(qualname, name, owner="module ")

    return __getattr__
