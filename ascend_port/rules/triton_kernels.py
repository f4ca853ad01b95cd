"""NPU508-NPU516: mechanical rewrites of Triton kernels (and of their launch code) for Triton-Ascend.

Each rewrite keeps the kernel valid GPU Triton and computes the same thing there (identical TTIR, or bitwise equal
results; within a tolerance for NPU511; tests/gpu proves it on a CUDA GPU), and turns a compile failure of
Triton-Ascend 3.2.0's frontend or adapter into a pass (tests/test_triton_ascend.py). Only kernels (a
`@triton.jit`/`@triton.autotune`/`@triton.heuristics` function, its decorators included) are touched: the same
spelling outside a kernel is plain Python or torch; NPU516 alone rewrites launch code. NPU514 and NPU515 are opt-in
(`--select` their ID): exact on Ascend, not always bitwise on a GPU. Research: shared/reference/triton-ascend.md
(K2-K10, K14).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import PROPERTIES_CALLS
from ascend_port.python.names import dotted
from ascend_port.python.scopes import FUNCTIONS, Trigger, outermost, top
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.kernels.tables import (
    ASCEND_LIBDEVICE_PACKAGES,
    LIBDEVICE_ON_ASCEND,
    TRITON_DECORATORS,
    as_triton,
)

HIGH, MEDIUM = Confidence.HIGH, Confidence.MEDIUM

LIBDEVICE_CHAIN = rule(
    "NPU508",
    "triton-libdevice-chain",
    HIGH,
    "`tl.extra.libdevice.f(...)`/`tl.extra.cuda.libdevice.f(...)` in a kernel -> Triton-Ascend's libdevice through "
    "a private try-import alias.",
    """
    Triton-Ascend has no `triton.language.extra.cuda` and does not remap the generic
    `triton.language.extra.libdevice` stubs, so a libdevice function reached through the attribute chain fails to
    compile ("cannot convert None ... to tensor"). The call goes through a module-level alias `_ap_libdevice`
    imported as NPU501 imports libdevice: Triton-Ascend's `extra.cann`, then `extra.ascend`, then the original
    module (so the kernel is unchanged on CUDA: the same function). Only the 46 functions both libdevices have are
    rerouted; the others stay (NPU500's TODO names them). As NPU501's, the reroute is made also in a project that
    supports the NPU already.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _round(X, Y):
            tl.store(Y, tl.extra.cuda.libdevice.round(tl.load(X)))
    After:
        import triton
        import triton.language as tl

        try:
            from triton.language.extra.cann import libdevice as _ap_libdevice
        except ImportError:
            try:
                from triton.language.extra.ascend import libdevice as _ap_libdevice
            except ImportError:
                from triton.language.extra.cuda import libdevice as _ap_libdevice


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _round(X, Y):
            tl.store(Y, _ap_libdevice.round(tl.load(X)))
    """,
)
INT_CAST = rule(
    "NPU509",
    "triton-int-cast",
    HIGH,
    "`x.to(tl.int64)` on a kernel's integer argument -> `tl.cast(x, tl.int64)`.",
    """
    Triton specialises an integer argument equal to 1 to a constexpr, and a constexpr has no `.to`: the kernel
    fails to compile for that value (on Triton-Ascend 3.2.0, and on GPU Triton too). `tensor.to(...)` is
    `tl.cast(tensor, ...)`, so for any other value the kernel is the same (identical TTIR). Only a kernel
    parameter that is not a `tl.constexpr` cast to an integer dtype is rewritten.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _copy(X, Y, stride):
            off = stride.to(tl.int64)
            tl.store(Y + off, tl.load(X + off))
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _copy(X, Y, stride):
            off = tl.cast(stride, tl.int64)
            tl.store(Y + off, tl.load(X + off))
    """,
)
DOT_TF32 = rule(
    "NPU510",
    "triton-dot-tf32",
    HIGH,
    '`tl.dot(..., allow_tf32=True)` / `input_precision="tf32"` in a kernel -> the keyword dropped.',
    """
    Triton-Ascend rejects `allow_tf32=` set to True and `input_precision="tf32"` ("please use
    input_precision='hf32' on Ascend"); `hf32` is not valid GPU Triton, and without the keyword both run their
    default: tf32 on a GPU (the same TTIR as before, unless `TRITON_F32_DEFAULT` is set) and ieee on Ascend (more
    precise). `allow_tf32=False` is valid on both and stays.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _mm(A, B, C, N: tl.constexpr):
            i = tl.arange(0, N)
            a = tl.load(A + i[:, None] * N + i[None, :])
            b = tl.load(B + i[:, None] * N + i[None, :])
            tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, allow_tf32=True))
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _mm(A, B, C, N: tl.constexpr):
            i = tl.arange(0, N)
            a = tl.load(A + i[:, None] * N + i[None, :])
            b = tl.load(B + i[:, None] * N + i[None, :])
            tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b))
    """,
)
DOT_TF32X3 = rule(
    "NPU511",
    "triton-dot-tf32x3",
    MEDIUM,
    '`tl.dot(..., input_precision="tf32x3")` in a kernel -> `input_precision="ieee"`.',
    """
    Triton-Ascend accepts only `"ieee"` and `"hf32"`. `"ieee"` is the precision tf32x3 emulates, and it is valid
    GPU Triton, but on a GPU it is not bitwise the same (its error is of the same class). Review: a GPU build
    gets slower.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _mm(A, B, C, N: tl.constexpr):
            i = tl.arange(0, N)
            a = tl.load(A + i[:, None] * N + i[None, :])
            b = tl.load(B + i[:, None] * N + i[None, :])
            tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision="tf32x3"))
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _mm(A, B, C, N: tl.constexpr):
            i = tl.arange(0, N)
            a = tl.load(A + i[:, None] * N + i[None, :])
            b = tl.load(B + i[:, None] * N + i[None, :])
            tl.store(C + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision="ieee"))
    """,
)
BOOL_CHAIN = rule(
    "NPU512",
    "triton-bool-chain",
    HIGH,
    "`A or B or C` / `A and B and C` in a kernel -> nested `A or (B or C)`.",
    """
    Triton-Ascend 3.2's frontend rejects chained boolean operators ("chained boolean operators (A or B or C) are not
    supported"); Python evaluates `A or (B or C)` exactly as the chain (same operands in the same order, same
    short-circuits), and GPU Triton 3.6 lowers a chain that way itself: the same TTIR. (`(A or B) or C` is the
    same too, but its TTIR combines the operands in another order.)

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _any(X, a, b, c):
            if a > 0 or b > 0 or c > 0:
                tl.store(X, 1)
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _any(X, a, b, c):
            if a > 0 or (b > 0 or c > 0):
                tl.store(X, 1)
    """,
)
CONSTEXPR_IF = rule(
    "NPU513",
    "triton-constexpr-if",
    MEDIUM,
    "`if CONSTEXPR or runtime:` / `if CONSTEXPR and runtime:` in a kernel -> the constexpr test in an `if` of its own.",
    """
    Triton-Ascend 3.2 does not short-circuit a constexpr inside `and`/`or`, so it lowers both branches, and a
    branch that a constexpr makes dead (a `None` pointer) fails to compile. Where the constexpr side is built only
    of `tl.constexpr` parameters (with `not`, `and`, `or`), the test is split: `if C or R: T else: E` becomes
    `if C: T elif R: T else: E`, and `if C and R: T else: E` becomes `if C: (if R: T else: E) else: E`. Same TTIR on
    a GPU. Review: the branch is written twice.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _init(H, H0, n, USE_H0: tl.constexpr):
            h = tl.zeros([16], dtype=tl.float32)
            if USE_H0 and n > 0:
                h = tl.load(H0 + tl.arange(0, 16))
            tl.store(H + tl.arange(0, 16), h)
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _init(H, H0, n, USE_H0: tl.constexpr):
            h = tl.zeros([16], dtype=tl.float32)
            if USE_H0:
                if n > 0:
                    h = tl.load(H0 + tl.arange(0, 16))
            tl.store(H + tl.arange(0, 16), h)
    """,
)

CLAMP = rule(
    "NPU514",
    "triton-clamp",
    MEDIUM,
    "Opt-in: `tl.clamp(x, lo, hi)` in a kernel -> `tl.minimum(tl.maximum(x, lo), hi)`.",
    """
    Triton-Ascend lowers `tl.clamp` as `max(lo, min(x, hi))`, which gives `hi` for a NaN `x` where GPU Triton gives
    `lo`; the two-step form gives `lo` on both (ninetoothed rewrites clamp this way for Ascend). On a GPU the
    result is bitwise the same except for NaN inputs with symmetric constant bounds on sm90 (which lowers that
    clamp to one instruction), so the rule is opt-in: `--select NPU514`. `propagate_nan` is kept on both steps.

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _clip(X, Y, N: tl.constexpr):
            i = tl.arange(0, N)
            tl.store(Y + i, tl.clamp(tl.load(X + i), -1.0, 2.0))
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.jit
        def _clip(X, Y, N: tl.constexpr):
            i = tl.arange(0, N)
            tl.store(Y + i, tl.minimum(tl.maximum(tl.load(X + i), -1.0), 2.0))
    """,
    opt_in=True,
)
AUTOTUNE_WARPS = rule(
    "NPU515",
    "triton-autotune-warps",
    MEDIUM,
    "Opt-in: autotune configs that differ only in `num_warps`/`num_stages` -> one config without them; the same "
    "options dropped from launches of the module's untuned kernels.",
    """
    Triton-Ascend ignores `num_warps` and `num_stages` (SIMD mode; its launcher warns "Please DO NOT tune args"),
    so such an autotune list compiles and benchmarks the same kernel once per config. The list becomes the one
    config they share, and the kernel runs with Triton's defaults. Opt-in (`--select NPU515`): on a GPU this changes
    the kernel's speed, and the bits of a reduction (`tl.sum` over a block) when the chosen `num_warps` was not 4.
    A list whose configs differ in anything else, or set other options (`num_ctas`, `maxnreg`, `pre_hook`), or a
    comprehension with an `if`, stays. A launch `kernel[grid](..., num_warps=4, num_stages=2)` of a `@triton.jit`
    kernel of the same module that is not autotuned (no config to supply them) loses them too. (Keep them when
    compiling for the 910_95/950 `simt_only` mode.)

    Before:
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [1, 2, 4, 8]], key=["N"])
        @triton.jit
        def _scale(X, Y, N: tl.constexpr):
            i = tl.arange(0, N)
            tl.store(Y + i, tl.load(X + i) * 2.0)
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] ...
        @triton.autotune(configs=[triton.Config({})], key=["N"])
        @triton.jit
        def _scale(X, Y, N: tl.constexpr):
            i = tl.arange(0, N)
            tl.store(Y + i, tl.load(X + i) * 2.0)
    """,
    opt_in=True,
)

CORE_COUNT = rule(
    "NPU516",
    "triton-core-count",
    MEDIUM,
    '`driver.active.utils.get_device_properties(d)["multiprocessor_count"]` and, in a module that imports triton, '
    "`torch.cuda.get_device_properties(d).multi_processor_count` -> a fallback to the NPU's vector core count.",
    """
    Launch code sizes persistent grids by the GPU's SM count. Triton-Ascend's driver reports only `max_shared_mem`,
    `num_aicore` and `num_vectorcore`, so the key lookup fails on an NPU. The read becomes a fallback chain: the SM
    count where the driver has one (the same value on a GPU), else the number of vector cores, which is what
    Triton-Ascend advises for a kernel without `tl.dot`. In a module that imports triton, torch's
    `get_device_properties(d).multi_processor_count` (read off the call, or off a variable assigned it in the same
    function) falls back the same way, to torch_npu's `vector_core_num` (the same count; torch_npu's properties
    have no SM count), through `getattr` so that CUDA's properties still give the SM count; the call itself is
    renamed by NPU106 (elsewhere the attribute keeps NPU108's TODO). The launch site does not say which kernel the
    count sizes, so it is always the vector cores. Review: a kernel that uses `tl.dot` runs on the AI (cube)
    cores: use `"num_aicore"` (torch: `cube_core_num`) for it.

    Before:
        from triton.runtime import driver as d

        n = d.active.utils.get_device_properties(0)["multiprocessor_count"]
    After:
        from triton.runtime import driver as d

        n = d.active.utils.get_device_properties(0).get("multiprocessor_count") or d.active.utils.get_device_properties(0)["num_vectorcore"]
    """,
)

ALIAS = "_ap_libdevice"  # private: a user name never clashes with it
INT_DTYPES = frozenset(
    f"triton.language.{t}" for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
)
DOT = ("triton.language.dot", "triton.language.core.dot")
CLAMPS = ("triton.language.clamp", "triton.language.core.clamp", "triton.language.math.clamp")
AUTOTUNES = ("triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune")
CONFIGS = ("triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config")
GPU_ONLY_OPTIONS = frozenset({"num_warps", "num_stages"})
SM_COUNT = "multi_processor_count"  # torch's name (the Triton driver's key is "multiprocessor_count")
_LIBDEVICE = re.compile(r"^triton\.language\.extra\.(?:cuda\.)?libdevice\.(\w+)$")


class _Kernel:
    """What the rewrites need to know about the kernel being visited."""

    def __init__(self, node: cst.FunctionDef, resolve: Callable[[cst.BaseExpression], str | None]) -> None:
        self.constexprs: set[str] = set()
        self.runtime: set[str] = set()  # parameters without a tl.constexpr annotation
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation.annotation if param.annotation is not None else None
            is_constexpr = annotation is not None and (
                resolve(annotation) == "triton.language.constexpr"
                or isinstance(annotation, cst.SimpleString)
                and "constexpr" in annotation.value
            )
            (self.constexprs if is_constexpr else self.runtime).add(param.name.value)


def _is_import(node: ast.stmt) -> bool:
    """An import, or a try statement of imports (NPU501's libdevice chain)."""
    if isinstance(node, ast.Try):
        return all(_is_import(s) for s in [*node.body, *(s for h in node.handlers for s in h.body)])
    return isinstance(node, (ast.Import, ast.ImportFrom))


def _qualified(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``tr.jit`` with ``import triton as tr`` -> ``triton.jit`` (Python's ``ast``)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr if expr.lpar else expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _operands(expr: cst.BaseExpression, operator: type) -> list[cst.BaseExpression]:
    """``A or B or C`` (written as a chain or nested) -> [A, B, C], for one kind of operator."""
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, operator):
        return [*_operands(expr.left, operator), *_operands(expr.right, operator)]
    return [expr]


def _nested(operands: Sequence[cst.BaseExpression], operator: cst.BaseBooleanOp) -> cst.BaseExpression:
    """[A, B, C] -> ``A or (B or C)``: never a chain (and how GPU Triton lowers the chain)."""
    expr = operands[-1]
    for operand in reversed(operands[:-1]):
        right = _parenthesized(expr) if isinstance(expr, cst.BooleanOperation) else expr
        expr = cst.BooleanOperation(left=operand, operator=operator, right=right)
    return expr


class TritonKernelTransformer(PortTransformer):
    """NPU508-NPU516: the whole kernel is parsed (the rewrites read its parameters); launch code only where it
    reads the driver's multiprocessor count."""

    TRIGGERS = (
        Trigger(r"@[ \t]*(?:[\w.]+\.)?(?:jit|autotune|heuristics)\b", scope=top, also=("triton",)),
        Trigger(r"multiprocessor_count", also=("triton",)),  # (launch code: the statement is enough)
        # (torch's properties may be stored in a variable of the function first)
        Trigger(r"multi_processor_count", outermost(*FUNCTIONS), also=("triton",)),
        Trigger(r"num_(?<!\wnum_)(?:warps|stages)\s*=", also=("triton",)),  # (NPU515's launches; \b behind)
    )
    RULES = (
        LIBDEVICE_CHAIN,
        INT_CAST,
        DOT_TF32,
        DOT_TF32X3,
        BOOL_CHAIN,
        CONSTEXPR_IF,
        CLAMP,
        AUTOTUNE_WARPS,
        CORE_COUNT,
    )
    DEVICE_NEUTRAL = frozenset({LIBDEVICE_CHAIN})  # (the alias falls back to the chain's own libdevice)

    def __init__(self, ctx: PortContext) -> None:
        super().__init__(ctx)
        self._kernels: list[_Kernel | None] = []  # one entry per enclosing function: None for a non-kernel
        self._core_counts: set[int] = set()  # ids of the NPU516 fallbacks made (see leave_Assign)
        self._inner_chains: set[int] = set()  # ids of the inner operations of `A or B or C` (see NPU512)
        # NPU516's torch form: only where triton is imported (elsewhere NPU108 leaves a TODO; device.py agrees)
        self._reads_triton = any(t == "triton" or t.startswith("triton.") for t in ctx.imports.aliases.values())
        self._properties: list[set[str]] = [set()]  # per function: names assigned torch's device properties
        self._untuned: set[str] | None = None  # NPU515: the module's @triton.jit kernels without autotune

    @property
    def _kernel(self) -> _Kernel | None:
        return self._kernels[-1] if self._kernels else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        resolve = self.ctx.imports.resolve
        is_kernel = any(
            as_triton(resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator))
            in TRITON_DECORATORS
            for d in node.decorators
        )
        self._kernels.append(_Kernel(node, resolve) if is_kernel else None)
        self._properties.append(set())

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._kernels.pop()
        self._properties.pop()
        return updated

    # --- NPU508: libdevice attribute chains -----------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value == SM_COUNT:
            return self._sm_count(original, updated)
        if self._kernel is None:
            return updated
        match = _LIBDEVICE.match(self.ctx.imports.resolve(original) or "")
        # (`_ap_libdevice.f` itself resolves to the fallback module: it is the port, not a chain)
        if match is None or match.group(1) not in LIBDEVICE_ON_ASCEND or dotted(original.value) == ALIAS:
            return updated
        if not isinstance(original.value, cst.Attribute):
            return updated  # `from ... import libdevice; libdevice.f`: NPU501 reroutes the import itself
        replacement = updated.with_changes(value=cst.Name(ALIAS))
        message = f"libdevice.{match.group(1)} -> {ALIAS}.{match.group(1)} (Triton-Ascend's libdevice, then CUDA's)"
        return self.fix(LIBDEVICE_CHAIN, original, replacement, message) or updated

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        """Import the alias the rerouted calls use, after the module's imports."""
        if not ctx.selection.enabled(LIBDEVICE_CHAIN) or f"{ALIAS}." not in text or re.search(rf"\bas {ALIAS}\b", text):
            return text
        body = tree().body
        first_use = next((s for s in body if ALIAS in ast.unparse(s)), None)
        if first_use is None:
            return text  # (only in a comment or a string)
        imports = [s for s in body if _is_import(s) and s.lineno < first_use.lineno]
        lines = text.splitlines(keepends=True)
        newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        generic = re.search(r"extra\.cuda\.libdevice|extra\.cuda\b", ctx.source) is None
        fallback = f"from {'triton.language.extra' if generic else 'triton.language.extra.cuda'} import libdevice"
        chain = [f"from {package} import libdevice" for package in ASCEND_LIBDEVICE_PACKAGES] + [fallback]
        block = [f"try:{newline}", f"    {chain[0]} as {ALIAS}{newline}", f"except ImportError:{newline}"]
        block += [f"    try:{newline}", f"        {chain[1]} as {ALIAS}{newline}", f"    except ImportError:{newline}"]
        block += [f"        {chain[2]} as {ALIAS}{newline}"]
        if imports:
            at = imports[-1].end_lineno or imports[-1].lineno
            block = [newline, *block]
        else:
            at = min([first_use.lineno, *(d.lineno for d in getattr(first_use, "decorator_list", []))]) - 1
            block = [*block, newline, newline]
        return "".join([*lines[:at], *block, *lines[at:]])

    # --- NPU509-NPU511: calls ----------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._kernel is None:
            return self._launch(original, updated)
        qualified = self.ctx.imports.resolve(original.func)
        if qualified in DOT:
            return self._dot(original, updated)
        if qualified in CLAMPS:
            return self._clamp(original, updated)
        if as_triton(qualified) in AUTOTUNES:
            return self._autotune(original, updated)
        func = original.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "to"
            and isinstance(func.value, cst.Name)
            and func.value.value in self._kernel.runtime
            and original.args
            and original.args[0].keyword is None
            and self.ctx.imports.resolve(original.args[0].value) in INT_DTYPES
        ):
            tl = self.ctx.imports.local_name_for("triton.language")
            if tl is None:
                return updated  # (nothing to spell tl.cast with)
            receiver = updated.func.value if isinstance(updated.func, cst.Attribute) else func.value
            args = [cst.Arg(receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), *updated.args]
            replacement = updated.with_changes(func=cst.parse_expression(f"{tl}.cast"), args=args)
            message = f"{func.value.value}.to(...) -> {tl}.cast({func.value.value}, ...) (an argument equal to 1 is a constexpr)"
            return self.fix(INT_CAST, original, replacement, message) or updated
        return updated

    def _dot(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args: list[cst.Arg | None] = list(updated.args)
        for index, arg in enumerate(original.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            value = arg.value
            text = value.evaluated_value if isinstance(value, cst.SimpleString) else None
            shown = cst.Module([]).code_for_node(value)
            if (keyword == "allow_tf32" and isinstance(value, cst.Name) and value.value == "True") or (
                keyword == "input_precision" and text == "tf32"
            ):
                message = f"tl.dot {keyword}={shown} dropped (Triton-Ascend rejects it; the default is the same on GPU)"
                # (fix returns its replacement when the rewrite is made: any non-None object says so)
                if self.fix(DOT_TF32, original, arg, message) is not None:
                    args[index] = None
            elif keyword == "input_precision" and isinstance(value, cst.SimpleString) and text == "tf32x3":
                message = 'tl.dot input_precision="tf32x3" -> "ieee" (Triton-Ascend has no tf32; not bitwise on GPU)'
                change = cst.SimpleString(value.value.replace("tf32x3", "ieee"))
                current = args[index]
                if current is not None and self.fix(DOT_TF32X3, original, change, message) is not None:
                    args[index] = current.with_changes(value=change)
        kept = [a for a in args if a is not None]
        if len(kept) == len(args):
            return updated.with_changes(args=kept)
        if kept and args[-1] is None:
            kept[-1] = kept[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(args=kept)

    # --- NPU516: launch code ------------------------------------------------------------------------------------

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        value = updated.value
        if (
            not isinstance(value, cst.Call)
            or self.ctx.imports.resolve(value.func) != "triton.runtime.driver.active.utils.get_device_properties"
            or len(updated.slice) != 1
            or not isinstance(index := updated.slice[0].slice, cst.Index)
            or not isinstance(key := index.value, cst.SimpleString)
            or key.evaluated_value != "multiprocessor_count"
        ):
            return updated
        fallback = updated.with_changes(
            slice=[
                cst.SubscriptElement(
                    cst.Index(cst.SimpleString(key.value.replace("multiprocessor_count", "num_vectorcore")))
                )
            ],
            lpar=[],
            rpar=[],
        )
        first = cst.Call(cst.Attribute(value, cst.Name("get")), [cst.Arg(key)])
        replacement = cst.BooleanOperation(
            left=first, operator=cst.Or(), right=fallback, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
        )
        message = 'get_device_properties(...)["multiprocessor_count"] -> falls back to "num_vectorcore" on the NPU'
        done = self.fix(CORE_COUNT, original, replacement, message)
        if done is None:
            return updated
        self._core_counts.add(id(done))
        return done

    def visit_Assign(self, node: cst.Assign) -> None:
        """Track ``props = torch.cuda.get_device_properties(d)`` in the function (another value forgets it)."""
        if len(node.targets) != 1 or not isinstance(target := node.targets[0].target, cst.Name):
            return
        value = node.value
        if isinstance(value, cst.Call) and self.ctx.imports.resolve(value.func) in PROPERTIES_CALLS:
            self._properties[-1].add(target.value)
        else:
            self._properties[-1].discard(target.value)

    def _sm_count(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        """``<torch properties>.multi_processor_count`` -> ``(getattr(p, "multi_processor_count", None) or
        p.vector_core_num)`` in a module that imports triton (launch code)."""
        value = original.value
        if not self._reads_triton or self._kernel is not None:
            return updated
        if not (
            isinstance(value, cst.Call)
            and self.ctx.imports.resolve(value.func) in PROPERTIES_CALLS
            or isinstance(value, cst.Name)
            and value.value in self._properties[-1]
        ):
            return updated
        properties = updated.value.with_changes(lpar=[], rpar=[]) if isinstance(value, cst.Name) else updated.value
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        first = cst.Call(
            cst.Name("getattr"),
            [
                cst.Arg(properties, comma=comma),
                cst.Arg(cst.SimpleString(f'"{SM_COUNT}"'), comma=comma),
                cst.Arg(cst.Name("None")),
            ],
        )
        fallback = cst.Attribute(properties, cst.Name("vector_core_num"))
        replacement = cst.BooleanOperation(
            left=first, operator=cst.Or(), right=fallback, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
        )
        message = ".multi_processor_count -> falls back to torch_npu's vector_core_num (the NPU's vector cores)"
        done = self.fix(CORE_COUNT, original, replacement, message)
        if done is None:
            return updated
        self._core_counts.add(id(done))
        return done

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if id(updated.value) in self._core_counts:  # (the whole value: no parentheses needed)
            return updated.with_changes(value=updated.value.with_changes(lpar=[], rpar=[]))
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if updated.value is not None and id(updated.value) in self._core_counts:
            return updated.with_changes(value=updated.value.with_changes(lpar=[], rpar=[]))
        return updated

    # --- NPU514, NPU515 (opt-in): clamp, autotune configs -------------------------------------------------------

    def _clamp(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        args = updated.args
        positional = [a for a in args if a.keyword is None]
        keywords = [a for a in args if a.keyword is not None]
        if (
            not isinstance(updated.func, cst.Attribute)
            or len(positional) not in (3, 4)
            or any(a.star for a in args)
            or [a.keyword.value for a in keywords if a.keyword is not None] not in ([], ["propagate_nan"])
            or len(args) > 4
        ):
            return updated
        plain = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in positional[:3]]
        nan = positional[3].value if len(positional) == 4 else keywords[0].value if keywords else None
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        extra = [cst.Arg(nan, keyword=cst.Name("propagate_nan"), equal=equal)] if nan is not None else []
        module = updated.func.value
        maximum = cst.Call(cst.Attribute(module, cst.Name("maximum")), [plain[0], plain[1], *extra])
        replacement = cst.Call(cst.Attribute(module, cst.Name("minimum")), [cst.Arg(maximum), plain[2], *extra])
        message = "tl.clamp -> tl.minimum(tl.maximum(...)) (Ascend's clamp gives hi for NaN, GPU's lo)"
        return self.fix(CLAMP, original, replacement, message) or updated

    def _autotune(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        index = next((i for i, a in enumerate(updated.args) if a.keyword and a.keyword.value == "configs"), None)
        if index is None and updated.args and updated.args[0].keyword is None:
            index = 0
        if index is None:
            return updated
        shared = self._shared_config(updated.args[index].value)
        if shared is None:
            return updated
        configs = updated.args[index].with_changes(value=cst.List([cst.Element(shared)]))
        replacement = updated.with_changes(args=[*updated.args[:index], configs, *updated.args[index + 1 :]])
        message = "autotune configs that differ only in num_warps/num_stages -> one config (ignored on Ascend)"
        return self.fix(AUTOTUNE_WARPS, original, replacement, message) or updated

    def _launch(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """``kernel[grid](..., num_warps=4, num_stages=2)`` of an untuned kernel of this module -> without them."""
        func = original.func
        if (
            not isinstance(func, cst.Subscript)
            or not isinstance(func.value, cst.Name)
            or not any(a.keyword and a.keyword.value in GPU_ONLY_OPTIONS for a in original.args)
            or func.value.value not in self._untuned_kernels()
        ):
            return updated
        kept = [a for a in updated.args if not (a.keyword and a.keyword.value in GPU_ONLY_OPTIONS)]
        if kept and kept[-1] is not updated.args[-1]:
            kept[-1] = kept[-1].with_changes(comma=updated.args[-1].comma)  # (the call's own trailing comma)
        dropped = ", ".join(a.keyword.value for a in original.args if a.keyword and a.keyword.value in GPU_ONLY_OPTIONS)
        message = f"{func.value.value}[...] launch: {dropped} dropped (ignored on Ascend; no autotune config sets them)"
        return self.fix(AUTOTUNE_WARPS, original, updated.with_changes(args=kept), message) or updated

    def _untuned_kernels(self) -> set[str]:
        """The module's top-level ``@triton.jit`` kernels without ``@triton.autotune`` (read once, from the whole
        module: the launch is often in another function than the kernel)."""
        if self._untuned is None:
            self._untuned = set()
            tree = self.ctx.module() if self.enabled(AUTOTUNE_WARPS) else None
            aliases = self.ctx.imports.aliases
            for node in tree.body if tree is not None else []:
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                names = {
                    as_triton(_qualified(d.func if isinstance(d, ast.Call) else d, aliases))
                    for d in node.decorator_list
                }
                parameters = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
                # (a kernel parameter of that name is an argument, not a launch option)
                if names & TRITON_DECORATORS and not names & set(AUTOTUNES) and not parameters & GPU_ONLY_OPTIONS:
                    self._untuned.add(node.name)
        return self._untuned

    def _shared_config(self, configs: cst.BaseExpression) -> cst.Call | None:
        """The one config a list of ``triton.Config`` calls differing only in num_warps/num_stages comes down to
        (without them), else None."""
        if isinstance(configs, cst.List):
            calls = [e.value for e in configs.elements if isinstance(e, cst.Element)]
            if len(calls) != len(configs.elements) or not calls:
                return None
            loop_names: set[str] = set()
        elif isinstance(configs, cst.ListComp):
            calls, loop_names = [configs.elt], set()
            clause: cst.CompFor | None = configs.for_in
            while clause is not None:
                if clause.ifs or clause.asynchronous:
                    return None
                loop_names |= {n.value for n in _names(clause.target)}
                clause = clause.inner_for_in
        else:
            return None
        stripped = []
        for call in calls:
            if not isinstance(call, cst.Call) or as_triton(self.ctx.imports.resolve(call.func)) not in CONFIGS:
                return None
            rest = [a for a in call.args[1:] if not (a.keyword and a.keyword.value in GPU_ONLY_OPTIONS)]
            if (
                not call.args
                or rest
                or call.args[0].star
                or (call.args[0].keyword or cst.Name("kwargs")).value != "kwargs"
            ):
                return None
            if {n.value for n in _names(call.args[0].value)} & loop_names:
                return None  # (the kwargs depend on the loop: real configs)
            stripped.append(call.with_changes(args=[call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
        code = {cst.Module([]).code_for_node(c) for c in stripped}
        one_config = len(calls) == 1 and isinstance(configs, cst.List)
        if len(code) != 1 or (one_config and len(cst.ensure_type(calls[0], cst.Call).args) == 1):
            return None  # (configs that differ in their kwargs; or one config already without options)
        return stripped[0]

    # --- NPU512, NPU513: boolean operators and `if` tests --------------------------------------------------------

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if _chained(node):
            self._inner_chains.add(id(node.left))  # (the outermost operation of a chain rewrites it whole)

    def leave_BooleanOperation(
        self, original: cst.BooleanOperation, updated: cst.BooleanOperation
    ) -> cst.BaseExpression:
        if self._kernel is None or not _chained(updated) or id(original) in self._inner_chains:
            return updated
        operands = []
        expr: cst.BaseExpression = updated
        while isinstance(expr, cst.BooleanOperation) and type(expr.operator) is type(updated.operator):
            if expr.lpar and expr is not updated:
                break  # (a parenthesized operand is one operand)
            operands.append(expr.right)
            expr = expr.left
        operands.append(expr)
        replacement = _nested(operands[::-1], updated.operator).with_changes(lpar=updated.lpar, rpar=updated.rpar)
        word = "or" if isinstance(updated.operator, cst.Or) else "and"
        message = f"chained `A {word} B {word} C` -> `A {word} (B {word} C)` (Triton-Ascend 3.2 rejects chains)"
        return self.fix(BOOL_CHAIN, original, replacement, message) or updated

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement:
        test = updated.test
        kernel = self._kernel
        if kernel is None or not isinstance(test, cst.BooleanOperation):
            return updated
        operator = test.operator
        operands = _operands(test, type(operator))
        count = next((i for i, o in enumerate(operands) if not _constexpr_only(o, kernel.constexprs)), len(operands))
        if count == 0 or count == len(operands):
            return updated  # (no constexpr side, or no runtime side: nothing to split)
        constexpr = _nested(operands[:count], operator).with_changes(lpar=[], rpar=[])
        runtime = _nested(operands[count:], operator).with_changes(lpar=[], rpar=[])
        space = cst.SimpleWhitespace(" ")
        if isinstance(operator, cst.Or):
            inner = cst.If(test=runtime, body=updated.body, orelse=updated.orelse, whitespace_before_test=space)
            replacement = updated.with_changes(test=constexpr, orelse=inner, whitespace_before_test=space)
        elif updated.orelse is None or isinstance(updated.orelse, cst.Else):
            inner = cst.If(test=runtime, body=updated.body, orelse=updated.orelse, whitespace_before_test=space)
            replacement = updated.with_changes(
                test=constexpr, body=cst.IndentedBlock([inner]), whitespace_before_test=space
            )
        else:
            return updated  # (`and` before an `elif`: the split would have to repeat the whole chain)
        shown = cst.Module([]).code_for_node(constexpr)
        message = (
            f"`if {shown} {'or' if isinstance(operator, cst.Or) else 'and'} <runtime>:` split: constexpr test first"
        )
        return self.fix(CONSTEXPR_IF, original, replacement, message) or updated


def _names(node: cst.CSTNode) -> list[cst.Name]:
    """Every Name in ``node``."""
    found: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(Collect())
    return found


def _chained(expr: cst.BaseExpression) -> bool:
    """``A or B or C`` as written: the left operand is the same operation, unparenthesized."""
    return (
        isinstance(expr, cst.BooleanOperation)
        and isinstance(expr.left, cst.BooleanOperation)
        and type(expr.left.operator) is type(expr.operator)
        and not expr.left.lpar
    )


def _constexpr_only(expr: cst.BaseExpression, constexprs: set[str]) -> bool:
    """Built only of tl.constexpr parameters, with not/and/or (decided when the kernel is specialised)."""
    if isinstance(expr, cst.Name):
        return expr.value in constexprs
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _constexpr_only(expr.expression, constexprs)
    if isinstance(expr, cst.BooleanOperation):
        return _constexpr_only(expr.left, constexprs) and _constexpr_only(expr.right, constexprs)
    return False
