"""NPU3xx: precision and AMP. Autocast and GradScaler device types, autocast state, float64 on the device, bf16
capability checks, LayerNorm upcasts.

Ownership with the device rules (so one site gets one rewrite): `torch.cuda.amp.*` in every import style
(`autocast`, `GradScaler`, `custom_fwd`, `custom_bwd`) is a `torch.cuda` name and is NPU106's, which renames it to
`torch.npu.amp.*` (torch_npu ships all four); every `device_type="cuda"` keyword (`torch.autocast`,
`torch.amp.custom_fwd`) is NPU103's. The rules here take the positional device strings, the GPU-named autocast
state functions, and what needs to understand more than one name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TypeGuard

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.comparisons import compared
from ascend_port.python.module_facts import ModuleFacts, spans_any, statement_blocks
from ascend_port.python.names import ImportIndex, build_dotted
from ascend_port.python.scopes import FUNCTIONS, Trigger, enclosing, outermost
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.device.strings import rewrite_device_expr

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

AMP_DEVICE_TYPE = rule(
    "NPU300",
    "amp-device-type",
    HIGH,
    'Positional `"cuda"` of `torch.autocast`, `torch.amp.autocast`, `torch.amp.GradScaler` and the autocast '
    'state functions -> `"npu"`.',
    """
    `torch.autocast("cuda")`, `torch.amp.autocast("cuda", dtype=...)`, `torch.amp.GradScaler("cuda")`,
    `torch.is_autocast_enabled("cuda")`, `torch.get_autocast_dtype("cuda")`, `torch.set_autocast_dtype("cuda", d)`,
    `torch.set_autocast_enabled("cuda", b)` and `torch.amp.is_autocast_available("cuda")` take the device type
    first. Ownership: the keyword form `device_type="cuda"` (also of `torch.amp.custom_fwd/custom_bwd`) is rewritten
    by NPU103, and `torch.cuda.amp.autocast/GradScaler/custom_fwd/custom_bwd` (calls, decorators and
    `from torch.cuda.amp import ...`) by NPU106, to `torch.npu.amp.*`; this rule never touches those.

    Before:
        import torch
        scaler = torch.amp.GradScaler("cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch)
    After:
        import torch
        scaler = torch.amp.GradScaler("npu")
        with torch.autocast("npu", dtype=torch.bfloat16):
            loss = model(batch)
    """,
)
AUTOCAST_GPU_API = rule(
    "NPU301",
    "autocast-gpu-api",
    HIGH,
    "`torch.get_autocast_gpu_dtype()`, `set_autocast_gpu_dtype`, `is_autocast_enabled()` -> `torch.npu.*`.",
    """
    The GPU-named autocast state functions (and the no-device forms that mean the GPU) have `torch.npu`
    counterparts in torch_npu: `torch.get_autocast_gpu_dtype()` -> `torch.npu.get_autocast_dtype()`,
    `torch.set_autocast_gpu_dtype(d)` -> `torch.npu.set_autocast_dtype(d)`, `torch.is_autocast_enabled()` ->
    `torch.npu.is_autocast_enabled()`, `torch.set_autocast_enabled(b)` -> `torch.npu.set_autocast_enabled(b)`.
    The forms that name a device (`torch.is_autocast_enabled("cuda")`) are NPU300's.

    Before:
        import torch
        dtype = torch.get_autocast_gpu_dtype()
    After:
        import torch
        dtype = torch.npu.get_autocast_dtype()
    """,
)
ROTARY_FP64 = rule(
    "NPU302",
    "rotary-table-fp64",
    MEDIUM,
    "float64/complex128 in rotary-embedding tables (RoPE) -> float32/complex64.",
    """
    NPU kernels do not support float64 and complex128 (transfer_to_npu even maps DoubleTensor to FloatTensor). A
    rotary table is used in float32/complex64 anyway. Where a rotary function builds it on the CPU (no `device=`
    but "cpu" or a local's `.device`, no `.cuda()`/`.to(device)`, no parameter or `self.<buffer>` made double) and
    hands every value out through one final cast (`return angles.cos().double()`, `.to(torch.complex128)`) or a
    buffer it registers, the double-precision intermediates stay (the CPU computes them: lowering them moves the
    table by 7.7e-3 at 128k positions) and only that cast becomes float32/complex64 (the buffer gets `.float()`).
    Elsewhere every double-precision dtype inside functions and classes whose name says rotary
    (`precompute_freqs_cis`, `RotaryEmbedding`, `*_rope_*`) and in assignments to `inv_freq`/`freqs_cis` is lowered:
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
FP64_ON_DEVICE = rule(
    "NPU303",
    "fp64-on-device",
    LOW,
    "A float64/complex128 tensor that goes to the device (outside rotary tables): TODO.",
    """
    An expression that both makes a tensor double precision (`dtype=torch.float64`, `.double()`,
    `.to(torch.float64)`, `.type(torch.float64)`, complex128) and puts it on the device (`device=` other than
    "cpu", `.cuda()`, `.npu()`, `.to(device)`), in one call or one method chain, or that makes double precision of
    a name its function set to a device tensor (`x = batch.cuda()` then `x.double()`); and any use of
    `torch.cuda.DoubleTensor` (torch_npu's transfer_to_npu silently maps it to FloatTensor). Most NPU operators
    reject float64 ("Unsupport data type: at::ScalarType::Double"). Not rewritten: keep the double-precision part
    on the CPU or use float32. Float64 maths that stays on the CPU (pre-processing, NumPy-style statistics) is not
    reported.

    Before:
        import torch
        weights = torch.tensor(counts, dtype=torch.float64, device="cuda")
    After:
        import torch
        # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; ...
        weights = torch.tensor(counts, dtype=torch.float64, device="npu")
    """,
)
BF16_CAPABILITY = rule(
    "NPU304",
    "bf16-capability-check",
    MEDIUM,
    "`get_device_capability()[0] >= 8` used to choose bf16 -> `torch.npu.is_bf16_supported()`.",
    """
    `get_device_capability()` returns None on NPU, so `cap[0] >= 8` raises TypeError. When the check is the
    Ampere test (`>= 8`, `> 7`, `>= (8, 0)`) and the statement, the `if` it tests, or the enclosing function name
    says bf16 (`bf16`, `bfloat16`), the comparison becomes `torch.npu.is_bf16_supported()`. The unpacking form
    `major, minor = torch.cuda.get_device_capability()` followed by `major >= 8` in the same block is rewritten too
    when the unpacked names are used only in such checks: the unpacking is then removed. Every other capability
    check keeps NPU108's TODO (this rule takes over NPU106 and NPU108 on the calls it rewrites). Medium: the
    intent is read from names.

    Before:
        import torch
        dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
    After:
        import torch
        dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16
    """,
)
LAYERNORM_UPCAST = rule(
    "NPU305",
    "layernorm-upcast",
    MEDIUM,
    "`F.layer_norm(x.float(), ...).type_as(x)` and `nn.LayerNorm` upcasts -> the upcast removed.",
    """
    Code written for fp16 GPUs upcasts around LayerNorm and casts back. The NPU LayerNorm kernel takes fp16 and
    bf16 inputs and accumulates in float32 itself, so the two casts only cost memory traffic. `.float()` (and
    `.to(torch.float32)`) on the input of `F.layer_norm`, of an `nn.LayerNorm` attribute of the same class, or of
    `super().forward` in an `nn.LayerNorm` subclass is removed when a cast back (`.type_as(x)`, `.to(x.dtype)`,
    `.type(x.dtype)`) names the same `x`; for `F.layer_norm`, `.float()` on the weight and bias arguments goes too.
    The cast back stays: under `torch.autocast("npu")` torch_npu runs layer_norm in float32 (its autocast fp32
    list), and the result must keep x's dtype as in the original (outside autocast the cast is a no-op). Medium:
    results differ in the last bits, and a model that keeps LayerNorm weights in float32 while activations are
    bf16 now passes mixed dtypes outside autocast; review.

    Before:
        import torch.nn.functional as F
        def forward(self, x):
            return F.layer_norm(x.float(), self.shape, self.weight.float(), self.bias.float(), self.eps).type_as(x)
    After:
        import torch.nn.functional as F
        def forward(self, x):
            return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps).type_as(x)
    """,
)

# --- tables ------------------------------------------------------------------------------------------------------

AMP_DEVICE_FIRST = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
    "torch.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
    "torch.is_autocast_enabled",
    "torch.get_autocast_dtype",
    "torch.set_autocast_dtype",
    "torch.set_autocast_enabled",
    "torch.amp.is_autocast_available",
    "torch.amp.autocast_mode.is_autocast_available",
}
# qualified -> (torch.npu name, how many positional arguments the GPU-meaning form has)
AUTOCAST_GPU = {
    "torch.get_autocast_gpu_dtype": ("get_autocast_dtype", 0),
    "torch.set_autocast_gpu_dtype": ("set_autocast_dtype", 1),
    "torch.is_autocast_enabled": ("is_autocast_enabled", 0),
    "torch.set_autocast_enabled": ("set_autocast_enabled", 1),
}
FP64_DTYPES = {
    "torch.float64": "float32",
    "torch.double": "float32",
    "torch.complex128": "complex64",
    "torch.cdouble": "complex64",
}
FP64_MARK = r"(?:(?<!np\.)(?<!numpy\.)float64|complex128|cdouble|\.double\(|torch\.double\b)"  # not NumPy's
# What makes a tensor double precision in a call (NPU303's makers, see _makes_fp64): `.double()`, or a float64 or
# complex128 attribute (`torch.float64`, not NumPy's) as the dtype keyword or a positional argument of `.to`/`.type`
# (within two levels of brackets). Mentions of float64 elsewhere (a dtype chosen, compared, passed on) are not.
_FP64_ATTRIBUTE = r"(?<![\w.])\w+(?:\s*\.\s*\w+)*?(?<!\bnp)(?<!\bnumpy)\s*\.\s*(?:float64|double|complex128|cdouble)\b"
FP64_MAKERS = (
    r"\.\s*double\s*\((?:\s|#[^\n]*)*\)",
    rf"dtype\s*=(?!=)\s*\(*\s*{_FP64_ATTRIBUTE}",
    rf"\.\s*(?:to|type)\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*?{_FP64_ATTRIBUTE}",
)
ROTARY_WORD = r"(?:[Rr]otary|RoPE|Rope|ROPE|rope|freqs?_cis|inv_freq)"
SAME_TOP_STATEMENT = r"(?:(?!\n(?:def\s|class\s|@))[\s\S])"  # any character before the next top-level def or class
ROTARY = re.compile(r"(?i:rotary|freqs?_cis|inv_freq)|RoPE|Rope|ROPE|(?:^|_)rope(?:_|s?$)")
DTYPE_NAME = re.compile(r"(?i)dtype")
CAPABILITY = {"torch.cuda.get_device_capability", "torch.npu.get_device_capability"}
BF16_SUPPORTED = {"torch.cuda.is_bf16_supported", "torch.npu.is_bf16_supported"}
BF16_WORD = re.compile(r"(?i)bf16|bfloat")
LAYER_NORM_FUNCTIONS = {"torch.nn.functional.layer_norm", "torch.layer_norm"}
LAYER_NORM_MODULES = {"torch.nn.LayerNorm", "torch.nn.modules.normalization.LayerNorm"}
CAST_BACK = {"type_as", "to", "type"}


# --- scopes of the triggers (see transforms/scopes.py) ---------------------------------------------------------


def rotary_scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt:
    """The outermost function or class named for rotary embeddings around a match (everything in it is a rotary
    table, see _in_rotary_table), else the statement."""
    return next(
        (node for node in path if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and ROTARY.search(node.name)), path[-1]
    )


def layer_norm_upcast(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The statement, if it calls a function named layer_norm with an upcast first argument (`x.float()`,
    `x.to(torch.float32)`): NPU305's functional form."""

    def upcast(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("float", "to", "type")
        )

    statement = path[-1]
    calls = (n for n in ast.walk(statement) if isinstance(n, ast.Call) and n.args and upcast(n.args[0]))
    named = (c.func.id if isinstance(c.func, ast.Name) else getattr(c.func, "attr", None) for c in calls)
    return statement if "layer_norm" in named else None


def layer_norm_module(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The innermost class around a match, if it names LayerNorm (an attribute or a base: NPU305's module form)."""
    cls = enclosing(path, ast.ClassDef)
    if cls is None:
        return None
    names = (
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(cls) if isinstance(n, (ast.Name, ast.Attribute))
    )
    return cls if "LayerNorm" in names else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _says_bf16_text(node: cst.CSTNode) -> bool:
    """Does the code of ``node`` mention bf16? Our own TODO comments (which suggest is_bf16_supported) do not count."""
    return any(BF16_WORD.search(line) for line in _code(node).splitlines() if "TODO(ascend-port)" not in line)


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _cast_back_target(original: cst.Call, updated: cst.Call) -> str | None:
    """The code of the tensor whose dtype ``<call>.type_as(x)`` or ``<call>.to(x.dtype)`` casts back to; None for
    any other one-argument method call, or when the value cast back is not a call (in both trees)."""
    if len(original.args) != 1 or original.args[0].keyword is not None or original.args[0].star:
        return None
    func, new_func = original.func, updated.func
    if not isinstance(func, cst.Attribute) or not isinstance(new_func, cst.Attribute):
        return None
    if not isinstance(func.value, cst.Call) or not isinstance(new_func.value, cst.Call):
        return None
    back = original.args[0].value
    if func.attr.value == "type_as":
        return _code(back)
    if isinstance(back, cst.Attribute) and back.attr.value == "dtype":
        return _code(back.value)
    return None


def _is_method(call: cst.BaseExpression, name: str, resolve: Callable) -> bool:
    """``<value>.name(...)`` on a value (not a module function reached through an import)."""
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == name
        and resolve(call.func) is None
    )


def _int(node: cst.BaseExpression) -> int | None:
    return int(node.value) if isinstance(node, cst.Integer) else None


def _ampere_threshold(op: cst.BaseCompOp, bound: cst.BaseExpression, flipped: bool) -> bool:
    """Does ``<major> op bound`` (or ``bound op <major>`` when flipped) mean "compute capability 8 or newer"?"""
    value = _int(bound)
    if isinstance(bound, cst.Tuple) and bound.elements:
        value = _int(bound.elements[0].value)
        rest = [_int(e.value) for e in bound.elements[1:]]
        if value != 8 or any(r != 0 for r in rest):
            return False
    if value is None:
        return False
    if flipped:
        return (isinstance(op, cst.LessThanEqual) and value == 8) or (isinstance(op, cst.LessThan) and value == 7)
    return (isinstance(op, cst.GreaterThanEqual) and value == 8) or (isinstance(op, cst.GreaterThan) and value == 7)


def _walk(node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...] = ()) -> Iterator[tuple[cst.CSTNode, tuple]]:
    """Every node under ``node`` with its ancestors, skipping names that are not references (``.attr``, keywords).
    In pre-order, with a stack: nested generators pass every node through each level above it."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(node, ancestors)]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        inner = (*ancestors, node)
        if isinstance(node, cst.Attribute):
            stack.append((node.value, inner))
            continue
        keyword = node.keyword if isinstance(node, cst.Arg) else None
        stack.extend((child, inner) for child in reversed(node.children) if child is not keyword or keyword is None)


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


DOUBLE_TENSORS = {"torch.cuda.DoubleTensor", "torch.npu.DoubleTensor"}
_DEVICE_WORD = re.compile(r"^(cuda|npu)\b")


def _sends_to_device(node: ast.Call) -> bool:
    """Does the call put a tensor on the device: ``.cuda()``, ``.npu()``, ``.to("cuda")``, ``device="cuda"``?"""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("cuda", "npu"):
        return True
    strings = [a for a in node.args if isinstance(func, ast.Attribute) and func.attr == "to"]
    strings += [k.value for k in node.keywords if k.arg == "device"]
    return any(
        isinstance(s, ast.Constant) and isinstance(s.value, str) and _DEVICE_WORD.match(s.value) for s in strings
    )


def _device_names_by_function(facts: ModuleFacts) -> dict[tuple[int, int], frozenset[str]]:
    """For each function (its line span): the names it (or a function inside it) assigns a tensor on the device
    (``x = batch.cuda()``, anywhere in the assigned expression). Only the statements on lines that say ``cuda`` or
    ``npu`` are read: every such call does."""
    lines = facts.lines_with("cuda", "npu")
    names: dict[tuple[int, int], set[str]] = {}

    def read(block: list[ast.stmt], functions: tuple[tuple[int, int], ...]) -> None:
        for statement in block:
            if not spans_any(statement, lines):
                continue
            if isinstance(statement, ast.Assign):
                targets = [t.id for t in statement.targets if isinstance(t, ast.Name)]
                calls = (n for n in ast.walk(statement.value) if isinstance(n, ast.Call))
                if targets and functions and any(map(_sends_to_device, calls)):
                    for span in functions:
                        names.setdefault(span, set()).update(targets)
            inner = functions
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = (*functions, (statement.lineno, statement.end_lineno or statement.lineno))
            for statements in statement_blocks(statement):
                read(statements, inner)

    head = facts.head  # (the functions around the calls the rules port are all in it)
    read(head.body if head is not None else [], ())
    return {span: frozenset(found) for span, found in names.items()}


class _PrecisionTransformer(PortTransformer):
    """What both precision transformers share: where they are (the enclosing functions, classes and assignment
    targets, which say whether this is a rotary table) and NPU305, for which each says which calls it recognises."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._rotary: list[bool] = []  # one entry per enclosing def, class and simple statement
        self._functions: list[str] = []
        self._classes: list[cst.ClassDef] = []
        self._lines: list[cst.SimpleStatementLine] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node.name.value)
        self._rotary.append(bool(ROTARY.search(node.name.value)))

    def leave_FunctionDef(self, original, updated):
        self._functions.pop()
        self._rotary.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._rotary.append(bool(ROTARY.search(node.name.value)))
        self._classes.append(node)

    def leave_ClassDef(self, original, updated):
        self._rotary.pop()
        self._classes.pop()
        return updated

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._lines.append(node)
        targets = []
        for small in node.body:
            if isinstance(small, cst.Assign):
                targets += [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets.append(small.target)
        names = [
            t.value if isinstance(t, cst.Name) else t.attr.value
            for t in targets
            if isinstance(t, (cst.Name, cst.Attribute))
        ]
        self._rotary.append(any(ROTARY.search(n) for n in names))

    def leave_SimpleStatementLine(self, original, updated):
        self._lines.pop()
        self._rotary.pop()
        return updated

    def _in_rotary_table(self) -> bool:
        """Inside a rotary function or class, or an assignment to a rotary table, with NPU302 on."""
        return any(self._rotary) and self.enabled(ROTARY_FP64)

    def _fp64_dtype(self, node: cst.BaseExpression) -> str | None:
        """The float32/complex64 name for a float64/complex128 dtype expression, else None."""
        return FP64_DTYPES.get(self.ctx.imports.resolve(node) or "") if isinstance(node, cst.Attribute) else None

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        """ "functional" (F.layer_norm), "module" (an nn.LayerNorm), or None."""
        raise NotImplementedError

    def _layer_norm_upcast(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        target = _cast_back_target(original, updated)
        if (
            target is None
            or not isinstance(original.func, cst.Attribute)
            or not isinstance(updated.func, cst.Attribute)
        ):
            return updated
        inner, new_inner = original.func.value, updated.func.value
        if not isinstance(inner, cst.Call) or not isinstance(new_inner, cst.Call):
            return updated  # (_cast_back_target saw calls on both sides)
        kind = self._layer_norm_kind(inner.func)
        if kind is None:
            return updated
        first = _positional(inner)[:1]
        base = self._upcast_base(first[0].value) if first else None
        if base is None or _code(base) != target:
            return updated
        args = self._without_upcasts(inner, new_inner, first[0], functional=kind == "functional")
        # The cast back stays: under autocast torch_npu runs layer_norm in float32 (its autocast fp32 list), so
        # without it the result would be float32 where the original returned x's dtype. Outside autocast it is a
        # no-op.
        replacement = updated.with_changes(func=updated.func.with_changes(value=new_inner.with_changes(args=args)))
        message = "LayerNorm float32 upcast removed (the cast back kept for autocast)"
        return self.fix(LAYERNORM_UPCAST, original, replacement, message) or updated

    def _without_upcasts(self, inner: cst.Call, new_inner: cst.Call, first: cst.Arg, functional: bool) -> list[cst.Arg]:
        """The arguments of ``new_inner`` (the transformed ``inner``) with the float32 upcast of the input taken off,
        and of the weight and bias too for the functional form (they were upcast to match the input)."""
        args = list(new_inner.args)
        position = -1
        for i, (old, new) in enumerate(zip(inner.args, args)):
            if old.keyword is None and not old.star:
                position += 1
            keyword = old.keyword.value if old.keyword is not None else None
            weight_or_bias = functional and (position in (2, 3) if keyword is None else keyword in ("weight", "bias"))
            if old is first or weight_or_bias:
                base = self._upcast_base(new.value)
                if base is not None:
                    args[i] = new.with_changes(value=base)
        return args

    def _upcast_base(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``x.float()``, ``x.to(torch.float32)``, ``x.type(torch.float32)``; else None."""
        resolve = self.ctx.imports.resolve
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) or resolve(expr.func):
            return None
        method = expr.func.attr.value
        if method == "float" and not expr.args:
            return expr.func.value
        if (
            method in ("to", "type")
            and len(expr.args) == 1
            and expr.args[0].keyword is None
            and resolve(expr.args[0].value) in ("torch.float32", "torch.float")
        ):
            return expr.func.value
        return None


class PrecisionCallTransformer(_PrecisionTransformer):
    """NPU300, NPU301, NPU303 and NPU305's `F.layer_norm` form: one call at a time, so it sees single statements
    (autocast, layer_norm and float64 are in most model files; parsing whole classes for them would be slow)."""

    # (the device-type strings NPU300 rewrites say cuda; the GPU-named state functions of NPU301 do not)
    TRIGGERS = (
        r"cuda",
        r"autocast_gpu|autocast_enabled",
        Trigger(r"(?<!self\.)\blayer_norm\(", layer_norm_upcast),
        *FP64_MAKERS,
        r"DoubleTensor",
    )
    RULES = (AMP_DEVICE_TYPE, AUTOCAST_GPU_API, FP64_ON_DEVICE, LAYERNORM_UPCAST)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.target_api(ctx.options)  # the target release (--torch-npu)
        # calls whose result is used by a method call (`a.double()` in `a.double().cuda()`)
        self._chained: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
            self._chained.add(id(node.func.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified in AMP_DEVICE_FIRST:
            updated = self._amp_device(original, updated)
        if qualified in AUTOCAST_GPU:
            updated = self._autocast_gpu(original, updated, qualified)
        if id(original) not in self._chained and not self._in_rotary_table():  # NPU302 rewrites those instead
            self._fp64_on_device(original)
        if isinstance(original.func, cst.Attribute) and original.func.attr.value in CAST_BACK:
            return self._layer_norm_upcast(original, updated)
        return updated

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        return "functional" if self.ctx.imports.resolve(func) in LAYER_NORM_FUNCTIONS else None

    def _amp_device(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        if not args or args[0].keyword is not None or args[0].star:
            return updated
        new = rewrite_device_expr(args[0].value, containers=False)
        if new is None:
            return updated
        args[0] = args[0].with_changes(value=new)
        return (
            self.fix(AMP_DEVICE_TYPE, original, updated.with_changes(args=args), "AMP device type cuda -> npu")
            or updated
        )

    def _autocast_gpu(self, original: cst.Call, updated: cst.Call, qualified: str) -> cst.Call:
        name, arity = AUTOCAST_GPU[qualified]
        torch = self.ctx.imports.local_name_for("torch")
        if torch is None or not self.api.has(name) or any(a.keyword is not None or a.star for a in original.args):
            return updated
        if len(original.args) != arity or any(
            isinstance(a.value, (cst.SimpleString, cst.FormattedString)) for a in original.args
        ):
            return updated  # a device-type argument: the torch.* function is right (NPU300 fixes the string)
        short = qualified.removeprefix("torch.")
        return (
            self.fix(
                AUTOCAST_GPU_API,
                original,
                updated.with_changes(func=build_dotted(f"{torch}.npu.{name}")),
                f"torch.{short} -> torch.npu.{name}",
            )
            or updated
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original)
        if qualified in DOUBLE_TENSORS:
            # (transfer_to_npu maps it to FloatTensor silently; a plain port keeps a type the operators reject)
            self.todo(
                FP64_ON_DEVICE,
                original,
                "DoubleTensor: double precision on the NPU: most NPU operators do not support it; use float32 "
                "(FloatTensor) or keep this part on the CPU",
            )
        return updated

    def _fp64_on_device(self, original: cst.Call) -> None:
        chain: list[cst.Call] = []
        node: cst.BaseExpression = original
        while isinstance(node, cst.Call):
            chain.append(node)
            node = node.func.value if isinstance(node.func, cst.Attribute) else cst.Name("_")
        # (the device is asked about only for a chain that makes float64: the name's check reads lines)
        if any(self._makes_fp64(c) for c in chain) and (
            any(self._to_device(c) for c in chain) or self._device_name(node, original)
        ):
            # The message names no trigger of NPU302 (float64, .double(), ...): a second run must not see one.
            self.todo(
                FP64_ON_DEVICE,
                original,
                "double precision on the NPU: most NPU operators do not support it; keep this part on the CPU "
                "or use float32",
            )

    def _device_name(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """Is ``receiver`` a name that its function sets to a tensor on the device (``x = batch.cuda()``)?"""
        if not isinstance(receiver, cst.Name):
            return False
        names = self.ctx.fact(_device_names_by_function)
        line = self.ctx.line_of(call)
        spans = [(start, end) for start, end in names if start <= line <= end]
        return bool(spans) and receiver.value in names[max(spans)]

    def _makes_fp64(self, call: cst.Call) -> bool:
        resolve = self.ctx.imports.resolve
        if _is_method(call, "double", resolve) and not call.args:
            return True
        positional_dtype = _is_method(call, "to", resolve) or _is_method(call, "type", resolve)
        return any(
            (arg.keyword is not None and arg.keyword.value == "dtype" or arg.keyword is None and positional_dtype)
            and self._fp64_dtype(arg.value) is not None
            for arg in call.args
        )

    def _to_device(self, call: cst.Call) -> bool:
        resolve = self.ctx.imports.resolve
        if _is_method(call, "cuda", resolve) or _is_method(call, "npu", resolve):
            return True
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                return not self._is_cpu(arg.value)
        if _is_method(call, "to", resolve):
            first = _positional(call)[:1]
            if first and not self._is_cpu(first[0].value) and not self._is_dtype(first[0].value):
                return True
        return False

    @staticmethod
    def _is_cpu(expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.SimpleString)
            and expr.evaluated_value == "cpu"
            or isinstance(expr, cst.Name)
            and expr.value == "None"
        )

    def _is_dtype(self, expr: cst.BaseExpression) -> bool:
        qualified = self.ctx.imports.resolve(expr) or ""
        if qualified.startswith("torch.") and qualified.count(".") == 1 and qualified != "torch.device":
            return True  # torch.float16, torch.bfloat16, ...
        name = expr.value if isinstance(expr, cst.Name) else expr.attr.value if isinstance(expr, cst.Attribute) else ""
        return bool(DTYPE_NAME.search(name))


class PrecisionTransformer(_PrecisionTransformer):
    """NPU302, NPU304 and NPU305's `nn.LayerNorm` form. These rules read enclosing function and class names, a
    function's blocks, a class's attributes, so their triggers' scopes are whole functions and classes, and the
    triggers are narrow (a rotary def or class followed by float64, a capability call, an upcast next to a cast
    back)."""

    TRIGGERS = (
        # (each starts with a literal, which keeps the regular expression engine fast on big files)
        Trigger(rf"def \w*{ROTARY_WORD}\w*{SAME_TOP_STATEMENT}{{0,4000}}?{FP64_MARK}", rotary_scope),
        Trigger(rf"class \w*{ROTARY_WORD}\w*{SAME_TOP_STATEMENT}{{0,4000}}?{FP64_MARK}", rotary_scope),
        Trigger(rf"(?:inv_freq|freqs?_cis)[^\n]*{FP64_MARK}", rotary_scope),
        # every capability call, however far from the bf16 evidence: a run must decide the same way as the run
        # before it (which may have written NPU108's TODO, itself naming get_device_capability and bf16)
        Trigger(r"get_device_capability", outermost(*FUNCTIONS)),
        # an upcast right before a cast back: `x.float()).type_as(x)`, `x.to(torch.float32)).to(x.dtype)`
        # (two patterns, each with a literal start: ``re`` then finds the start by a fast search)
        Trigger(r"\.float\(\)\s*\)\s*\.(?:type_as|to|type)\(", layer_norm_module, also=("layernorm",)),
        Trigger(r"float32\s*\)\s*\)\s*\.(?:type_as|to|type)\(", layer_norm_module, also=("layernorm",)),
    )
    RULES = (ROTARY_FP64, BF16_CAPABILITY, LAYERNORM_UPCAST)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._if_tests: dict[int, cst.If] = {}
        self._layer_norms: dict[int, tuple[set[str], bool]] = {}  # class -> (nn.LayerNorm attributes, subclass?)
        self._bf16_checks: set[int] = set()
        self._removed: set[int] = set()
        # per enclosing function: its table built on the CPU, if it is one (read when a cast in it first asks)
        self._tables: list[_CpuTable | cst.FunctionDef | None] = []

    def _torch(self) -> str | None:
        return self.ctx.imports.local_name_for("torch")

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

    def visit_If(self, node: cst.If) -> None:
        for child, _ in _walk(node.test):
            if isinstance(child, cst.Comparison):
                self._if_tests[id(child)] = node

    # --- NPU302, NPU305: calls ---------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        new = self._rotary_dtypes(original, updated) if self._in_rotary_table() else updated
        if (
            isinstance(original.func, cst.Attribute)
            and original.func.attr.value in CAST_BACK
            and isinstance(new, cst.Call)
        ):
            return self._layer_norm_upcast(original, new)
        return new

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

    def _class_layer_norms(self, node: cst.ClassDef) -> tuple[set[str], bool]:
        """The ``self.X = nn.LayerNorm(...)`` attributes of a class, and whether it subclasses nn.LayerNorm."""
        if id(node) not in self._layer_norms:
            resolve = self.ctx.imports.resolve
            subclass = any(resolve(base.value) in LAYER_NORM_MODULES for base in node.bases)
            attributes = set()
            for child, _ in _walk(node.body):
                if (
                    isinstance(child, cst.Assign)
                    and isinstance(child.value, cst.Call)
                    and resolve(child.value.func) in LAYER_NORM_MODULES
                ):
                    for target in child.targets:
                        t = target.target
                        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                            attributes.add(t.attr.value)
            self._layer_norms[id(node)] = (attributes, subclass)
        return self._layer_norms[id(node)]

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        if not self._classes or not isinstance(func, cst.Attribute):
            return None
        attributes, subclass = self._class_layer_norms(self._classes[-1])
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return "module" if func.attr.value in attributes else None
        is_super = (
            isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name)
            and func.value.func.value == "super"
        )
        return "module" if subclass and is_super and func.attr.value == "forward" else None

    # --- NPU304: bf16 capability checks --------------------------------------------------------------------------

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if id(node) in self._bf16_checks or len(node.comparisons) != 1:
            return
        call = self._direct_capability_check(node)
        if call is not None and self._claimable() and self._says_bf16(node, (), self._lines[-1:]):
            self._bf16_checks.add(id(node))
            self.ctx.claim(call.func, by=BF16_CAPABILITY)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if not self._claimable():
            return
        body = list(node.body)
        for i, stmt in enumerate(body):
            found = self._capability_assignment(stmt)
            if found is None:
                continue
            call, names, kind = found
            checks = self._only_bf16_uses(body[i + 1 :], names, kind)
            if checks:
                self._bf16_checks.update(id(c) for c in checks)
                self._removed.add(id(stmt))
                self.ctx.claim(call.func, by=BF16_CAPABILITY)

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        if id(original) not in self._bf16_checks:
            return updated
        torch = self._torch() or "torch"
        replacement = cst.Call(build_dotted(f"{torch}.npu.is_bf16_supported"), lpar=updated.lpar, rpar=updated.rpar)
        return (
            self.fix(
                BF16_CAPABILITY, original, replacement, "compute-capability bf16 check -> torch.npu.is_bf16_supported()"
            )
            or updated
        )

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        """``cap()[0] >= 8 and torch.cuda.is_bf16_supported()`` would become ``is_bf16_supported() and
        is_bf16_supported()``: keep one."""
        if not isinstance(original.operator, cst.And):
            return updated
        for check, other, kept in (
            (original.left, original.right, updated.right),
            (original.right, original.left, updated.left),
        ):
            if (
                id(check) in self._bf16_checks
                and isinstance(other, cst.Call)
                and not other.args
                and self.ctx.imports.resolve(other.func) in BF16_SUPPORTED
            ):
                return kept.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else kept
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if not any(id(s) in self._removed for s in original.body):
            return updated
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for old, new in zip(original.body, updated.body):
            if not isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                body.append(new)  # (every statement is one of the two: this tells the type checker)
                continue
            if id(old) in self._removed and self.fix(
                BF16_CAPABILITY, old, True, "get_device_capability() unpacking removed (only used by the bf16 check)"
            ):
                carried += list(new.leading_lines)  # its comments stay, above the next statement
                continue
            if carried:
                new = new.with_changes(leading_lines=[*carried, *new.leading_lines])
                carried = []
            body.append(new)
        return updated.with_changes(body=body)

    def _claimable(self) -> bool:
        return self.enabled(BF16_CAPABILITY) and self._torch() is not None

    def _is_capability_call(self, node: cst.BaseExpression) -> TypeGuard[cst.Call]:
        return isinstance(node, cst.Call) and self.ctx.imports.resolve(node.func) in CAPABILITY

    def _direct_capability_check(self, node: cst.Comparison) -> cst.Call | None:
        """The capability call of ``cap()[0] >= 8`` or ``cap() >= (8, 0)`` (either side), else None."""
        target = node.comparisons[0]
        for side, bound, flipped in ((node.left, target.comparator, False), (target.comparator, node.left, True)):
            if isinstance(side, cst.Subscript) and self._is_capability_call(side.value) and _is_index0(side):
                if isinstance(bound, cst.Integer) and _ampere_threshold(target.operator, bound, flipped):
                    return side.value
            if (
                self._is_capability_call(side)
                and isinstance(bound, cst.Tuple)
                and _ampere_threshold(target.operator, bound, flipped)
            ):
                return side
        return None

    def _capability_assignment(self, stmt: cst.BaseStatement):
        """``major, minor = cap()`` -> (call, names, "major"); ``cap = cap()`` -> (call, {cap}, "whole")."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        assign = stmt.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not self._is_capability_call(assign.value):
            return None
        target = assign.targets[0].target
        if isinstance(target, cst.Name):
            return assign.value, {target.value}, "whole"
        if (
            isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)
        ):
            names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
            if names[0] == "_":
                return None
            return assign.value, {n for n in names if n != "_"}, names[0]
        return None

    def _only_bf16_uses(self, stmts, names: set[str], kind: str) -> list[cst.Comparison]:
        """The bf16 comparisons that are the only uses of ``names`` in ``stmts``; [] if there is any other use."""
        checks: list[cst.Comparison] = []
        for stmt in stmts:
            for node, ancestors in _walk(stmt):
                if not isinstance(node, cst.Name) or node.value not in names:
                    continue
                comparison = self._use_as_check(node, ancestors, kind)
                lines = [a for a in ancestors if isinstance(a, cst.SimpleStatementLine)]
                if comparison is None or not self._says_bf16(comparison, ancestors, lines):
                    return []
                checks.append(comparison)
        return checks

    @staticmethod
    def _use_as_check(name: cst.Name, ancestors: tuple, kind: str) -> cst.Comparison | None:
        """The comparison when ``name`` is used as ``major >= 8`` (kind: the major's name) or as ``cap[0] >= 8`` /
        ``cap >= (8, 0)`` (kind "whole"); None for any other use."""
        parents = list(ancestors)
        operand: cst.CSTNode = name
        if kind == "whole":
            if (
                parents
                and isinstance(parents[-1], cst.Subscript)
                and parents[-1].value is name
                and _is_index0(parents[-1])
            ):
                operand = parents.pop()
        elif name.value != kind:
            return None  # `minor`, or any other name of the unpacking
        found = compared(operand, parents)
        if found is None:
            return None
        comparison, bound, operator, flipped = found
        if isinstance(bound, cst.Tuple) != (kind == "whole" and operand is name):
            return None
        return comparison if _ampere_threshold(operator, bound, flipped) else None

    def _says_bf16(self, comparison: cst.Comparison, ancestors: tuple, lines) -> bool:
        """Is the check about bf16: the function name, the statement, or the `if` it tests says so."""
        if any(BF16_WORD.search(f) for f in self._functions):
            return True
        functions = [a.name.value for a in ancestors if isinstance(a, cst.FunctionDef)]
        if any(BF16_WORD.search(f) for f in functions):
            return True
        if lines and _says_bf16_text(lines[-1]):
            return True
        test_of = self._if_tests.get(id(comparison))
        if test_of is None:
            for a in reversed(ancestors):
                if isinstance(a, cst.If) and any(n is comparison for n, _ in _walk(a.test)):
                    test_of = a
                    break
        return test_of is not None and (_says_bf16_text(test_of.test) or _says_bf16_text(test_of.body))


def _is_index0(subscript: cst.Subscript) -> bool:
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    return _int(subscript.slice[0].slice.value) == 0
