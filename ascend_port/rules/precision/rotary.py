"""NPU302: float64/complex128 in rotary-embedding tables, lowered. Its rule, its triggers' patterns and scope, the
reading of a table built on the CPU (whose double-precision intermediates stay), the question both transformers ask
(RotaryScope: PrecisionCallTransformer leaves the calls of a rotary table to NPU302) and the rewrite (RotaryRules)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS
from ascend_port.rules.precision.base import ROTARY, _is_method, _positional, _walk
from ascend_port.rules.precision.layer_norm import LayerNormRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

ROTARY_FP64 = rule(
    "NPU302",
    "rotary-table-fp64",
    MEDIUM,
    "float64/complex128 in rotary-embedding tables (RoPE) and sinusoidal timestep embeddings -> float32/complex64.",
    """
    NPU kernels do not support float64 and complex128 (transfer_to_npu even maps DoubleTensor to FloatTensor). A
    rotary table is used in float32/complex64 anyway. Where a rotary function builds it on the CPU (no `device=`
    but "cpu" or a local's `.device`, no `.cuda()`/`.to(device)`, no parameter or `self.<buffer>` made double) and
    hands every value out through one final cast (`return angles.cos().double()`, `.to(torch.complex128)`) or a
    buffer it registers, the double-precision intermediates stay (the CPU computes them: lowering them moves the
    table by 7.7e-3 at 128k positions) and only that cast becomes float32/complex64 (the buffer gets `.float()`).
    Elsewhere every double-precision dtype inside functions and classes whose name says rotary
    (`precompute_freqs_cis`, `RotaryEmbedding`, `*_rope_*`), or a sinusoidal timestep embedding built the same way
    (`sinusoidal_embedding_1d`, `get_timestep_embedding`: float32 is what diffusers computes them in), and in
    assignments to `inv_freq`/`freqs_cis` is lowered:
    `dtype=torch.float64` (and `torch.double`) -> `torch.float32`, `torch.complex128`/`torch.cdouble` ->
    `torch.complex64`, `.double()` -> `.float()`, `.to(torch.float64)` -> `.to(torch.float32)`. Comparisons
    (`x.dtype == torch.float64`) stay. A module built under `torch.set_default_device("npu")` would make the
    CPU-built intermediates on the NPU: check such models.
    (Whole classes are parsed only where needed: a float64 more than ~4,000 characters below the rotary `def` or
    `class` line is not seen as rotary and gets NPU303's TODO instead when it goes to the device.)
    Medium: a table lowered on the device loses the last digits a double-precision build had; check long-context
    accuracy.

    Before:
        import torch
        def precompute_freqs_cis(dim, end, theta=10000.0):
            freqs = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
            angles = torch.outer(torch.arange(end, dtype=torch.float64), freqs)
            return torch.polar(torch.ones_like(angles), angles).to(torch.complex128)
    After:
        import torch
        def precompute_freqs_cis(dim, end, theta=10000.0):
            freqs = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
            angles = torch.outer(torch.arange(end, dtype=torch.float64), freqs)
            return torch.polar(torch.ones_like(angles), angles).to(torch.complex64)
    """,
)


# --- tables ------------------------------------------------------------------------------------------------------

FP64_MARK = r"(?:(?<!np\.)(?<!numpy\.)float64|complex128|cdouble|\.double\(|torch\.double\b)"  # not NumPy's
ROTARY_WORD = r"(?:[Rr]otary|RoPE|Rope|ROPE|rope|freqs?_cis|inv_freq|[Ss]inusoid|[Tt]imestep_embedding)"  # (ROTARY's)
SAME_TOP_STATEMENT = r"(?:(?!\n(?:def\s|class\s|@))[\s\S])"  # any character before the next top-level def or class


# --- scopes of the triggers (see python/scopes.py) ---------------------------------------------------------


def rotary_scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt:
    """The outermost function or class named for rotary embeddings around a match (everything in it is a rotary
    table, see _in_rotary_table), else the statement."""
    return next(
        (node for node in path if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and ROTARY.search(node.name)), path[-1]
    )


class _CpuTable:
    """A rotary function that builds its table on the CPU in double precision (see cpu_table): the fp64 casts that
    finish each value it hands out (returns, `self.<attr> =`, `register_buffer`), which become the one cast to
    float32/complex64, and the buffers to cast with `.float()` where they are registered."""

    def __init__(self) -> None:
        self.final_casts: set[int] = set()
        self.buffers: set[int] = set()


def code_of_node(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The name or `self` a chain of calls, attributes and subscripts starts from."""
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node


def cpu_table(fn: cst.FunctionDef, fp64: Callable, resolve: Callable) -> _CpuTable | None:
    """Does ``fn`` build a rotary table in float64/complex128 on the CPU and hand out no double-precision value but
    through one final cast (or a buffer it registers)? Then the double-precision intermediates can stay (the CPU
    computes them; lowering them moves the table by 7.7e-3 at 128k positions) and only those casts go to
    float32/complex64. None when anything may be on the device: a `device=` other than "cpu" or a local's
    `.device`, `.cuda()`, `.npu()`, `.to(<not a dtype>)`, or a double-precision cast of a parameter or of
    `self.<attr>` (an input or buffer); or when a double-precision value may leave otherwise."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    complex_marks = False
    for call in (n for n, _ in _walk(fn.body) if isinstance(n, cst.Call)):
        if not _on_cpu(call, params, resolve):
            return None
        if _fp64_cast_dtype(call, fp64, resolve) is not None:
            root = _root(call.func.value) if isinstance(call.func, cst.Attribute) else None
            if isinstance(root, cst.Name) and (root.value in params or root.value == "self"):
                return None
        complex_marks |= any(fp64(a.value) == "complex64" for a in call.args if isinstance(a.value, cst.Attribute))
    tainted = _double_names(fn, fp64, resolve)
    table, exits = _CpuTable(), 0
    for kind, value in _exits(fn):
        exits += 1
        if _fp64_cast_dtype(value, fp64, resolve) is not None:
            table.final_casts.add(id(value))
        elif not _is_double(value, tainted, fp64, resolve):
            continue  # float32 already (cast in the function, or on a second run)
        elif kind == "buffer" and isinstance(value, cst.Name) and not complex_marks:
            table.buffers.add(id(value))
        else:
            return None
    return table if exits else None


def _is_double(expr: cst.BaseExpression, tainted: set[str], fp64: Callable, resolve: Callable) -> bool:
    """May ``expr`` be a double-precision value: it names a double-precision dtype or `.double()`, or a name that
    may hold one, and does not end in a cast to float32/complex64?"""
    if _lowered_cast(expr, resolve):
        return False
    for node, _ in _walk(expr):
        if isinstance(node, cst.Name) and node.value in tainted:
            return True
        if isinstance(node, cst.Attribute) and fp64(node) is not None:
            return True
        if isinstance(node, cst.Call) and _is_method(node, "double", resolve):
            return True
    return False


def _double_names(fn: cst.FunctionDef, fp64: Callable, resolve: Callable) -> set[str]:
    """The local names that may hold a double-precision value, in source order (a name, once double, stays so: a
    loop or a branch may bring the value back): assigned one, or a list it is appended to."""
    tainted: set[str] = set()
    for node, _ in _walk(fn.body):
        if isinstance(node, cst.Assign) and _is_double(node.value, tainted, fp64, resolve):
            for target in node.targets:
                tainted.update(n.value for n, _ in _walk(target.target) if isinstance(n, cst.Name))
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("append", "extend", "insert")
            and isinstance(node.func.value, cst.Name)
            and any(_is_double(a.value, tainted, fp64, resolve) for a in node.args)
        ):
            tainted.add(node.func.value.value)
    return tainted


def _on_cpu(call: cst.Call, params: set[str], resolve: Callable) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            value = arg.value
            local_device = (
                isinstance(value, cst.Attribute)
                and value.attr.value == "device"
                and isinstance(value.value, cst.Name)
                and value.value.value not in params | {"self"}
            )
            cpu = isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu"
            if not (local_device or cpu or isinstance(value, cst.Name) and value.value == "None"):
                return False
    if _is_method(call, "cuda", resolve) or _is_method(call, "npu", resolve):
        return False
    if _is_method(call, "to", resolve):
        first = _positional(call)[:1]
        return not first or (resolve(first[0].value) or "").startswith("torch.")
    return True


def _fp64_cast_dtype(node: cst.BaseExpression, fp64: Callable, resolve: Callable) -> str | None:
    """The lowered dtype of `x.double()`, `x.to(torch.float64)`, `x.type(torch.complex128)`, else None."""
    if not isinstance(node, cst.Call):
        return None
    if _is_method(node, "double", resolve) and not node.args:
        return "float32"
    if (_is_method(node, "to", resolve) or _is_method(node, "type", resolve)) and len(node.args) == 1:
        value = node.args[0].value
        if node.args[0].keyword is None or node.args[0].keyword.value == "dtype":
            return fp64(value) if isinstance(value, cst.Attribute) else None
    return None


def _lowered_cast(node: cst.BaseExpression, resolve: Callable) -> bool:
    """`x.float()`, `x.to(torch.float32)`, `x.to(torch.complex64)`: a value already cast once."""
    if not isinstance(node, cst.Call):
        return False
    if _is_method(node, "float", resolve) and not node.args:
        return True
    return (
        _is_method(node, "to", resolve)
        and len(node.args) == 1
        and resolve(node.args[0].value) in ("torch.float32", "torch.float", "torch.complex64", "torch.cfloat")
    )


def _exits(fn: cst.FunctionDef) -> Iterator[tuple[str, cst.BaseExpression]]:
    """("value", v) for each `return v` (each element of a returned tuple) and `self.<attr> = v`, ("buffer", v) for
    each `self.register_buffer(name, v, ...)`, in ``fn`` (not in functions nested in it)."""
    for node, ancestors in _walk(fn.body):
        if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
            continue
        if isinstance(node, cst.Return) and node.value is not None:
            returned = node.value
            values = [e.value for e in returned.elements] if isinstance(returned, cst.Tuple) else [returned]
            yield from (("value", v) for v in values)
        elif isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Attribute) and getattr(_root(t.target), "value", None) == "self"
            for t in node.targets
        ):
            yield "value", node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "register_buffer"
            and len(node.args) >= 2
        ):
            yield "buffer", node.args[1].value


class RotaryScope(LayerNormRules):
    """Where NPU302 rewrites: the question both transformers ask (PrecisionCallTransformer's NPU303 leaves a rotary
    table's calls to it)."""

    def _in_rotary_table(self) -> bool:
        """Inside a rotary function or class, or an assignment to a rotary table, with NPU302 on."""
        return any(self._rotary) and self.enabled(ROTARY_FP64)


class RotaryRules(RotaryScope):
    """NPU302's rewrite (PrecisionTransformer): a rotary table's float64 dtypes and `.double()` lowered, or only the
    casts that finish a table built on the CPU."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # per enclosing function: its table built on the CPU, if it is one (read when a cast in it first asks)
        self._tables: list[_CpuTable | cst.FunctionDef | None] = []

    def _table(self) -> _CpuTable | None:
        """cpu_table of the innermost function, read once."""
        if not self._tables:
            return None
        top = self._tables[-1]
        if isinstance(top, cst.FunctionDef):
            top = self._tables[-1] = cpu_table(top, self._fp64_dtype, self.ctx.imports.resolve)
        return top

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        rotary = any(self._rotary) and self.enabled(ROTARY_FP64)
        self._tables.append(node if rotary else None)

    def leave_FunctionDef(self, original, updated):
        self._tables.pop()
        return super().leave_FunctionDef(original, updated)

    def _rotary_dtypes(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("double", "register_buffer")) and all(
            self._fp64_dtype(a.value) is None for a in original.args if a.keyword is None or a.keyword.value == "dtype"
        ):
            return updated  # (neither a cast to lower nor a buffer to cast: the table is not read for it)
        table = self._table()
        if table is not None:  # built on the CPU: only the casts that finish it are lowered, once
            if id(original) in table.final_casts:
                return self._lower_rotary_dtype(original, updated, " (computed in float64 on the CPU, cast once)")
            return self._cast_buffer(original, updated, table)
        return self._lower_rotary_dtype(original, updated, "")

    def _cast_buffer(self, original: cst.Call, updated: cst.Call, table: _CpuTable) -> cst.Call:
        """`self.register_buffer("inv_freq", inv_freq)` of a float64 table built on the CPU -> `inv_freq.float()`."""
        if not (
            isinstance(original.func, cst.Attribute)
            and original.func.attr.value == "register_buffer"
            and len(original.args) >= 2
            and id(original.args[1].value) in table.buffers
        ):
            return updated
        args = list(updated.args)
        args[1] = args[1].with_changes(value=cst.parse_expression(f"{code_of_node(args[1].value)}.float()"))
        message = "rotary table buffer computed in float64 on the CPU, cast once -> float32"
        return self.fix(ROTARY_FP64, original, updated.with_changes(args=args), message) or updated

    def _lower_rotary_dtype(self, original: cst.Call, updated: cst.Call, why: str) -> cst.BaseExpression:
        resolve = self.ctx.imports.resolve
        if _is_method(original, "double", resolve) and not original.args:
            return (
                self.fix(
                    ROTARY_FP64,
                    original,
                    updated.with_changes(func=updated.func.with_changes(attr=cst.Name("float"))),
                    f"rotary table .double() -> .float(){why}",
                )
                or updated
            )
        by_position = (
            isinstance(original.func, cst.Attribute)
            and original.func.attr.value in ("to", "type")
            and resolve(original.func) is None
        )
        args = list(updated.args)
        changed = []
        for i, (old, new) in enumerate(zip(original.args, args)):
            if old.keyword is not None and old.keyword.value != "dtype" or old.keyword is None and not by_position:
                continue
            if (short := self._fp64_dtype(old.value)) is not None and isinstance(new.value, cst.Attribute):
                args[i] = new.with_changes(value=new.value.with_changes(attr=cst.Name(short)))
                changed.append(short)
        if not changed:
            return updated
        return (
            self.fix(
                ROTARY_FP64,
                original,
                updated.with_changes(args=args),
                f"rotary table dtype -> {', '.join(changed)}{why}",
            )
            or updated
        )
