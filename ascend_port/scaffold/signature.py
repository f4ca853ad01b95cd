"""An op's C++ function read without a compiler: its parameters (name, kind, optional, written by the op), its
result, and the shapes its ``CHECK_SHAPE(x, batch, dim)`` checks state, from the text ``formats/cpp_source.py``
blanks comments and literals of."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from ascend_port.formats.cpp_source import strip_code

# The kinds a parameter can have, as Python sees it.
TENSOR, BOOL, INT, FLOAT, STR, OTHER = "tensor", "bool", "int", "float", "str", "other"
_INT_TYPES = re.compile(r"\b(?:int|int64_t|int32_t|long|size_t|uint32_t|uint64_t|short|c10::SymInt|SymInt)\b")
_FLOAT_TYPES = re.compile(r"\b(?:float|double|at::Scalar|c10::Scalar|Scalar)\b")
# A dimension of a shape: a name, or a name plus or minus a number (`width - 1`).
DIM = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:([+-])\s*(\d+))?\s*$")


@dataclass(frozen=True)
class Param:
    """One parameter of the op's C++ function."""

    name: str  # as Python calls it: the C++ name without the trailing `_` of `bias_`
    cpp_type: str
    kind: str
    optional: bool = False
    written: bool = False  # a non-const Tensor& the op writes its result into (`at::Tensor &out`)


@dataclass(frozen=True)
class Signature:
    """The C++ function an op is bound to."""

    function: str
    file: str
    line: int
    params: tuple[Param, ...]
    result: str  # "none" (void), "tensor", "tensors" (vector/tuple), "other"
    # Parameter name -> its dimensions as the function checks them (`CHECK_SHAPE(weight, dim, width)`).
    shapes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The parameter whose shape a returned `empty_like(x)` takes, where the function says so.
    result_like: str | None = None


def bound_function(text: str, op: str) -> str | None:
    """The C++ function ``m.def("op", &fn)``, ``m.def("op(Tensor x) -> Tensor", &fn)`` or ``m.impl("op",
    TORCH_FN(fn))`` binds ``op`` to in ``text``."""
    match = re.search(
        rf'\.\s*(?:def|impl)\s*\(\s*"(?:\w+::)?{re.escape(op)}(?:\.\w+)?(?:\([^"]*)?"\s*,\s*(?:TORCH_FN\s*\(\s*)?&?\s*([\w:]+)',
        text,
    )
    return match.group(1).rsplit("::", 1)[-1] if match else None


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside <>, (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _param(text: str) -> Param | None:
    declaration = text.split("=", 1)[0].strip()  # (a default value is no part of the type)
    match = re.match(r"^(.*?)([A-Za-z_]\w*)\s*$", declaration, re.DOTALL)
    if match is None or not match.group(1).strip():
        return None
    cpp_type = " ".join(match.group(1).split())
    optional = "optional" in cpp_type
    if re.search(r"\bTensor\b", cpp_type) and not re.search(r"vector|List|ArrayRef", cpp_type):
        kind = TENSOR
    elif re.search(r"\bbool\b", cpp_type):
        kind = BOOL
    elif re.search(r"string", cpp_type):
        kind = STR
    elif re.search(r"vector|ArrayRef|List", cpp_type):
        kind = OTHER
    elif _INT_TYPES.search(cpp_type):
        kind = INT
    elif _FLOAT_TYPES.search(cpp_type):
        kind = FLOAT
    else:
        kind = OTHER
    written = kind == TENSOR and not optional and "&" in cpp_type and not re.search(r"\bconst\b", cpp_type)
    name = match.group(2).rstrip("_") or match.group(2)
    # (a C++ name that is a Python keyword, `lambda`, `in`, keeps the underscore Python needs)
    return Param(f"{name}_" if keyword.iskeyword(name) else name, cpp_type, kind, optional, written)


def _result(return_type: str) -> str:
    if re.search(r"\bvoid\b", return_type):
        return "none"
    if re.search(r"vector|tuple|pair", return_type):
        return "tensors"
    return "tensor" if re.search(r"\bTensor\b", return_type) else "other"


def find_function(text: str, function: str, file: str) -> Signature | None:
    """The definition of ``function`` in C++ ``text`` (a declaration without a body is skipped)."""
    code = strip_code(text)
    for match in re.finditer(rf"(?<![\w:.]){re.escape(function)}\s*\(", code):
        open_at = match.end() - 1
        depth, close = 0, -1
        for j in range(open_at, len(code)):
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            if depth == 0:
                close = j
                break
        body_at = code.find("{", close)
        if close < 0 or body_at < 0 or code[close + 1 : body_at].strip() not in ("", "const", "noexcept"):
            continue
        head_start = max(code.rfind(ch, 0, match.start()) for ch in ";}{") + 1
        return_type = " ".join(code[head_start : match.start()].split())
        if not return_type or return_type.endswith(("=", "return", ",")) or "(" in return_type:
            continue  # a call, not a definition
        params = tuple(p for p in (_param(t) for t in _split_top(code[open_at + 1 : close])) if p is not None)
        body = code[body_at : _body_end(code, body_at)]
        return Signature(
            function,
            file,
            code.count("\n", 0, match.start()) + 1,
            params,
            _result(return_type),
            _checked_shapes(body, {p.name for p in params}),
            _result_like(body, {p.name for p in params}),
        )
    return None


def _body_end(code: str, start: int) -> int:
    depth = 0
    for j in range(start, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j + 1
    return len(code)


def _checked_shapes(body: str, names: set[str]) -> dict[str, tuple[str, ...]]:
    """``CHECK_SHAPE(x, a, b)`` of the function's body, for its parameters: the first check of each whose
    dimensions are all names or a name plus or minus a number (`!is_complex ? seqlen : seqlen * 2` is skipped)."""
    shapes: dict[str, tuple[str, ...]] = {}
    for match in re.finditer(r"\bCHECK_SHAPE\s*\(([^;]*?)\)\s*;", body):
        first, *dims = _split_top(match.group(1))
        if first in names and first not in shapes and dims and all(DIM.match(d) for d in dims):
            shapes[first] = tuple(" ".join(d.split()) for d in dims)
    return shapes


def _result_like(body: str, names: set[str]) -> str | None:
    """The parameter whose shape the returned tensor takes: `auto out = torch::empty_like(x); ... return out;`."""
    returned = re.findall(r"\breturn\s+\{?\s*([A-Za-z_]\w*)", body)
    for name in returned:
        like = re.search(rf"\b{re.escape(name)}\s*=\s*(?:torch|at)::(?:empty|zeros|ones)_like\s*\(\s*(\w+)", body)
        if like and like.group(1).rstrip("_") in names:
            return like.group(1).rstrip("_")
    return None
