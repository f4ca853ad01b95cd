"""The Python side of a scaffold: the CPU reference (the project's own pure-torch version copied and called with the
op's arguments, or a NotImplementedError to write) and the values of its test: the inputs, shaped as the fallback
or the C++ checks say with a distinct size per dimension, the result's expected shape, the call sites."""

from __future__ import annotations

import textwrap

from ascend_port.scaffold.fallback import is_backward
from ascend_port.scaffold.plan import Plan
from ascend_port.scaffold.signature import BOOL, DIM, FLOAT, INT, STR, TENSOR, Param

_SIZES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)


def _shapes(p: Plan) -> tuple[dict[str, tuple[str, ...]], str]:
    """Parameter -> its dimensions, from the fallback's docstring first (its names are Python's), then the C++
    checks; and where they come from."""
    doc = p.fallback.shapes if p.fallback else {}
    shapes = {**p.signature.shapes, **doc}
    sources = []
    if doc:
        sources.append(f"{p.fallback.name}'s docstring and its `a, b = x.shape`" if p.fallback else "")
    if p.signature.shapes:
        sources.append(f"CHECK_SHAPE in {p.signature.file}")
    return shapes, " and ".join(sources) or "no shape found: edit them"


def _sizes(shapes: dict[str, tuple[str, ...]], order: list[str]) -> dict[str, int]:
    symbols: list[str] = []
    for name in order:
        for dim in shapes.get(name, ()):
            match = DIM.match(dim)
            if match and match.group(1) not in symbols:
                symbols.append(match.group(1))
    return {s: _SIZES[i % len(_SIZES)] for i, s in enumerate(symbols)}


def _evaluate(dims: tuple[str, ...], sizes: dict[str, int]) -> tuple[int, ...]:
    values = []
    for dim in dims:
        match = DIM.match(dim)
        assert match is not None  # (shapes hold only such dimensions)
        value = sizes[match.group(1)]
        if match.group(2):
            value += int(match.group(3)) * (1 if match.group(2) == "+" else -1)
        values.append(max(value, 1))
    return tuple(values)


def _input_line(param: Param, shapes: dict[str, tuple[str, ...]], sizes: dict[str, int]) -> str:
    key = f'        "{param.name}": '
    dims = shapes.get(param.name)
    if param.kind == TENSOR and param.optional:
        return key + "None,  # optional: left out (pass a tensor to test that path)"
    if param.kind == TENSOR:
        shape = _evaluate(dims, sizes) if dims else (2, 8)
        note = f"({', '.join(dims)})" if dims else "TODO(ascend-port): shape unknown (no CHECK_SHAPE, no docstring)"
        args = ", ".join(map(str, shape))
        if param.written:
            return key + f"torch.empty({args}, dtype=dtype, device=device),  # {note}, written by the op"
        return key + f"rand({args}),  # {note}"
    value = {BOOL: "False", INT: "1", FLOAT: "0.5", STR: '""'}.get(param.kind, "None")
    todo = "" if param.kind in (BOOL, FLOAT) else "  TODO(ascend-port): a value the op accepts"
    return key + f"{value},  # {param.cpp_type}{todo}".rstrip()


def _expected(p: Plan, shapes: dict[str, tuple[str, ...]], sizes: dict[str, int]) -> tuple[str, str]:
    for name, why in (
        ("out", "the shape the fallback's docstring gives its result"),
        (next((q.name for q in p.signature.params if q.written), ""), "the tensor the op writes into"),
        (p.signature.result_like or "", f"the op returns empty_like({p.signature.result_like})"),
    ):
        if name and name in shapes:
            return repr(_evaluate(shapes[name], sizes)), f"{why}: ({', '.join(shapes[name])})"
    return "None", "TODO(ascend-port): the result's shape is not known here: set it"


def _call_sites(p: Plan) -> str:
    if not p.op.call_sites:
        return "none found in the project's Python"
    parts = []
    for site in p.op.call_sites[:6]:
        where = f"{site.file}:{site.line}" + (f" in {site.function}()" if site.function else "")
        use = f"unpacked into {site.unpacked} names" if site.unpacked else ("used" if site.used else "discarded")
        parts.append(f"{where} (result {use})")
    more = len(p.op.call_sites) - 6
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _arity_check(p: Plan) -> str:
    unpacked = max((s.unpacked for s in p.op.call_sites), default=0)
    if not unpacked:
        return "# (the call sites take one result, or none)"
    if p.fallback is not None:
        return (
            f"# The call sites unpack {unpacked} results: {p.fallback.name} gives the first; the NPU operator must "
            "give them all"
        )
    return f"assert isinstance(result, (tuple, list)) and len(result) >= {unpacked}  # as the call sites unpack it"


def python_values(p: Plan) -> dict[str, str]:
    """What fills the package's ``__init__.py``, the test and the README."""
    sig = p.signature
    shapes, shape_source = _shapes(p)
    sizes = _sizes(shapes, [q.name for q in sig.params] + ["out"])
    expected, expected_note = _expected(p, shapes, sizes)
    written = [q.name for q in sig.params if q.written]
    names = [q.name for q in sig.params]
    return {
        "py_params": ", ".join(names),
        "py_args": ", ".join(names),
        "py_tuple": f"({', '.join(names)}{',' if len(names) == 1 else ''})",
        "sizes": repr(sizes),
        "shape_source": shape_source,
        "call_sites": _call_sites(p),
        "expected_shape": expected,
        "expected_note": expected_note,
        "inputs": "\n".join(_input_line(q, shapes, sizes) for q in sig.params),
        "written": ", ".join(written) or "none: the op returns its result",
        "written_names": repr(written),
        "arity_check": _arity_check(p),
        "reference_note": (
            f"the project's own {p.fallback.name} ({p.fallback.file}:{p.fallback.line}), copied"
            if p.fallback
            else "a NotImplementedError to replace with the op's computation in torch"
        ),
        "reference_step": (
            "reference.py calls the fallback with the arguments whose names match (a TODO names any other)."
            if p.fallback
            else "reference.py is a TODO until then, and the test skips saying so: write it first."
        ),
    }


def reference_source(p: Plan) -> str:
    """reference.py: the fallback copied and called with the op's arguments, or a NotImplementedError to write."""
    params = [q.name for q in p.signature.params]
    cpp = f"{p.signature.function}() in {p.signature.file}:{p.signature.line}"
    head = [f'"""CPU reference of {p.op.qualified} ({cpp}), the op `ascend-port scaffold` wrote the Ascend C']
    lines = [f"def {p.name}({', '.join(params)}):"]
    doc = f'    """{p.op.qualified}: the arguments of the C++ function, in its order'
    written = [q.name for q in p.signature.params if q.written]
    doc += f"; the result is written into {', '.join(written)}" if written else ""
    lines.append(doc + '."""')
    if p.fallback is None:
        why = (
            "a backward op: its reference is the gradient of the forward op's reference (torch.autograd.grad)"
            if is_backward(p.op)
            else "no pure-torch version of it was found beside its call sites"
        )
        head.append(f'operator for. {why[0].upper() + why[1:]}: write it from the CUDA kernels."""')
        lines += [
            "    raise NotImplementedError(",
            f'        "TODO(ascend-port): write the CPU reference of {p.op.qualified} from its CUDA kernels "',
            f'        "({p.signature.file}): {why}"',
            "    )",
        ]
        return "\n".join([*_wrap(head), "", "from __future__ import annotations", "", "", *lines]) + "\n"
    fb = p.fallback
    head.append(
        f"operator for: the project's own pure-torch version, {fb.name} ({fb.file}:{fb.line}), copied here with what "
        'it uses of its module, so that it runs without the project\'s CUDA imports."""'
    )
    lowered = {q.lower(): q for q in params}
    passed = [f"{a}={lowered[a.lower()]}" for a in fb.params if a.lower() in lowered]
    unmatched = [q for q in params if q.lower() not in {a.lower() for a in fb.params} and q not in written]
    lines.append(f"    result = {fb.name}({', '.join(passed)})")
    if unmatched:
        lines.append(
            f"    # TODO(ascend-port): {fb.name} has no parameter for {', '.join(unmatched)}: check that its defaults "
            "compute what the op computes with them (or adapt the call)"
        )
    if written:
        lines += [
            "    first = result[0] if isinstance(result, (tuple, list)) else result",
            f"    {written[0]}.copy_(first)",
            "    return None  # (the C++ op returns nothing: it writes its result)",
        ]
    else:
        lines.append("    return result")
    body = [*_wrap(head), "", "from __future__ import annotations", "", *fb.imports, *([""] if fb.imports else []), ""]
    body += [f"# Copied from {fb.file}:{fb.line} (the project's own code).", fb.source, "", "", *lines]
    return "\n".join(body) + "\n"


def _wrap(head: list[str]) -> list[str]:
    """The module docstring's sentences, wrapped at 116 columns."""
    return textwrap.wrap(" ".join(head), 116)


def conftest(p: Plan) -> str:
    """Puts the scaffold's folder first on sys.path, so that its package imports however pytest is started."""
    return (
        f'"""pytest set-up of the {p.name} scaffold: its package is importable from the tests."""\n\n'
        "import sys\nfrom pathlib import Path\n\n"
        "sys.path.insert(0, str(Path(__file__).resolve().parent))\n"
    )
