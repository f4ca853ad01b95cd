"""A call to a fused op bound to the operator schema the target torch_npu registers (its wheel's
``libtorch_npu.so``, read into the inventory's ``schemas``), as torch binds a call to ``torch.ops.npu.<op>``:
unknown keywords, missing or surplus arguments and values of the wrong type raise the RuntimeError torch raises
(also a TypeError, the error Python raises for a bad call), and the release's defaults apply."""

from __future__ import annotations

import inspect
import re
from functools import cache
from numbers import Integral, Real

import torch


class SchemaError(RuntimeError, TypeError):
    """A call that does not match the registered schema (torch raises RuntimeError for torch.ops calls)."""


_ARGUMENT = re.compile(r"^(?P<type>\S+)\s+(?P<name>\w+)(?:=(?P<default>.+))?$")


def _default(text: str) -> object:
    text = text.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text[:1] in "\"'":
        return text[1:-1]
    if text.startswith("["):
        return [_default(v) for v in text[1:-1].split(",") if v.strip()]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text  # a name (an enum such as a ScalarType): kept as written


def _split(arguments: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for c in arguments:
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
    return [p for p in [*parts, current.strip()] if p]


@cache  # a fused op is called once per layer and step: its schema is parsed once
def parse(schema: str) -> tuple[str, inspect.Signature, dict[str, str]]:
    """The op name, a Python signature and the declared type of each argument (not to be modified)."""
    name, _, rest = schema.partition("(")
    arguments = rest[: rest.rindex(") ->")] if ") ->" in rest else rest.rstrip(")")
    parameters, types, kind = [], {}, inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in _split(arguments):
        if part == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        match = _ARGUMENT.match(part)
        if match is None:
            continue
        default = inspect.Parameter.empty if match["default"] is None else _default(match["default"])
        parameters.append(inspect.Parameter(match["name"], kind, default=default))
        types[match["name"]] = match["type"]
    return name.split(".")[0], inspect.Signature(parameters), types


def _matches(kind: str, value: object) -> bool:
    """Does torch's schema matcher take ``value`` for an argument of type ``kind``?"""
    if kind.endswith("?"):
        return value is None or _matches(kind[:-1], value)
    if kind.endswith("[]") or re.search(r"\[\d*\]$", kind):
        inner = kind[: kind.index("[")]
        return isinstance(value, (list, tuple)) and all(_matches(inner, v) for v in value)
    if kind.startswith("Tensor"):
        return isinstance(value, torch.Tensor)
    if kind in ("int", "SymInt"):
        return (isinstance(value, Integral) and not isinstance(value, bool)) or (
            isinstance(value, torch.Tensor) and value.dim() == 0 and not value.is_floating_point()
        )
    if kind == "float":
        return (isinstance(value, Real) and not isinstance(value, bool)) or (
            isinstance(value, torch.Tensor) and value.dim() == 0
        )
    if kind == "bool":  # torch takes a number for a bool (sync=1), not a string or a tensor
        return isinstance(value, Real)
    if kind == "str":
        return isinstance(value, str)
    return True


def bind(schema: str, args: tuple, kwargs: dict) -> dict[str, object]:
    """The arguments of a call by schema name, defaults applied; SchemaError as torch words it."""
    op, signature, types = parse(schema)
    for name in kwargs:
        if name not in signature.parameters:
            raise SchemaError(f"Unknown keyword argument '{name}' for operator 'npu::{op}'. Schema: npu::{schema}")
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise SchemaError(f"npu::{op}() {error}. Declaration: npu::{schema}") from None
    bound.apply_defaults()
    for position, (name, value) in enumerate(bound.arguments.items()):
        if not _matches(types[name], value):
            raise SchemaError(
                f"npu::{op}() Expected a value of type '{types[name]}' for argument '{name}' but instead found "
                f"type '{type(value).__name__}'.\nPosition: {position}\nValue: {value!r}\nDeclaration: npu::{schema}"
            )
    return dict(bound.arguments)


def call(implementation, schema: str, args: tuple, kwargs: dict, arguments: dict | None = None):
    """``implementation`` (a reference of ascend_port/emulate/ops.py) on the call bound to ``schema`` (``arguments``:
    already bound): arguments by name where the reference has the name, else by position (the schema's ``self`` is
    the reference's ``input``)."""
    arguments = bind(schema, args, kwargs) if arguments is None else arguments
    names = list(inspect.signature(implementation).parameters)
    defaults = parse(schema)[1].parameters
    passed: dict[str, object] = {}
    for position, (name, value) in enumerate(arguments.items()):
        if name in names or position < len(names):
            passed[name if name in names else names[position]] = value
        elif value != defaults[name].default:  # an argument of a later release than the reference knows
            raise NotImplementedError(f"{parse(schema)[0]}: the argument {name} is not in this reference")
    return implementation(**passed)
