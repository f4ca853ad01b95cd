"""NPU303: double precision that goes to the device, outside rotary tables (NPU302's). The calls and method chains
that make a float64/complex128 tensor and put it on the device, the names a function sets to a device tensor, and
`torch.cuda.DoubleTensor`: reported with a TODO, never rewritten (the fix is a choice: the CPU, or float32)."""

from __future__ import annotations

import ast
import re

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.module_facts import ModuleFacts, spans_any, statement_blocks
from ascend_port.rules.precision.amp import AmpRules
from ascend_port.rules.precision.base import _is_method, _positional

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

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
    Stays (double precision on the CPU):
        import torch
        table = torch.zeros(3, dtype=torch.float64)
    """,
)


# --- tables ------------------------------------------------------------------------------------------------------

# What makes a tensor double precision in a call (NPU303's makers, see _makes_fp64): `.double()`, or a float64 or
# complex128 attribute (`torch.float64`, not NumPy's) as the dtype keyword or a positional argument of `.to`/`.type`
# (within two levels of brackets). Mentions of float64 elsewhere (a dtype chosen, compared, passed on) are not.
_FP64_ATTRIBUTE = r"(?<![\w.])\w+(?:\s*\.\s*\w+)*?(?<!\bnp)(?<!\bnumpy)\s*\.\s*(?:float64|double|complex128|cdouble)\b"
FP64_MAKERS = (
    r"\.\s*double\s*\((?:\s|#[^\n]*)*\)",
    rf"dtype\s*=(?!=)\s*\(*\s*{_FP64_ATTRIBUTE}",
    rf"\.\s*(?:to|type)\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*?{_FP64_ATTRIBUTE}",
)
DTYPE_NAME = re.compile(r"(?i)dtype")
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


class Fp64Rules(AmpRules):
    """NPU303 (PrecisionCallTransformer): a call or method chain that makes double precision on the device, and
    `torch.cuda.DoubleTensor`."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # calls whose result is used by a method call (`a.double()` in `a.double().cuda()`)
        self._chained: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
            self._chained.add(id(node.func.value))

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
