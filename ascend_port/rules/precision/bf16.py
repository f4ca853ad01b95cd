"""NPU304: the compute-capability checks that choose bf16 (`get_device_capability()[0] >= 8`), which become
`torch.npu.is_bf16_supported()`: the checks (direct, or of a capability unpacked for them alone) and whether the
function, the statement or the `if` around them says bf16."""

from __future__ import annotations

import ast
import re
from typing import TypeGuard

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.options import PortOptions
from ascend_port.python.comparisons import compared
from ascend_port.python.device_facts import resolve_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import build_dotted
from ascend_port.python.scopes import FUNCTIONS, Scope, outermost
from ascend_port.rules.precision.base import _code, _walk
from ascend_port.rules.precision.rotary import RotaryRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

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
    when the unpacked names are used only in such checks: the unpacking is then removed. So is the call of a
    module function that only returns the capability (`def capability(): return
    torch.cuda.get_device_capability()`, or its `[0]`): `capability() >= (8, 0)` choosing bf16 asks the NPU, and
    the function keeps NPU108's TODO for its other callers. Every other capability check keeps NPU108's TODO (this
    rule takes over NPU106 and NPU108 on the calls it rewrites). Medium: the intent is read from names.

    Before:
        import torch
        dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
    After:
        import torch
        dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16
    """,
)


# --- tables ------------------------------------------------------------------------------------------------------

CAPABILITY = {"torch.cuda.get_device_capability", "torch.npu.get_device_capability"}
BF16_SUPPORTED = {"torch.cuda.is_bf16_supported", "torch.npu.is_bf16_supported"}
BF16_WORD = re.compile(r"(?i)bf16|bfloat")


# `    return torch.cuda.get_device_capability()` (or its `[0]`): the body of a capability wrapper, which the nearest
# top-level `def` above it names (a superset of capability_wrappers' functions: the triggers only widen a parse).
_CAPABILITY_RETURN = re.compile(
    r"^[ \t]+return [\w.]+\.get_device_capability\([^)\n]*\)(?:\[0\])?[ \t]*$", re.MULTILINE
)
_TOP_DEF = re.compile(r"def (\w+)\(")


def capability_wrapper_calls(text: str, options: PortOptions) -> list[tuple[int, Scope]]:
    """Trigger matches for the calls of a module's capability wrappers (``capability() >= (8, 0)``), whose lines
    name no trigger (PrecisionTransformer.option_triggers)."""
    if "get_device_capability" not in text:
        return []  # (most modules: one search)
    names = set()
    for found in _CAPABILITY_RETURN.finditer(text):
        start = text.rfind("\ndef ", 0, found.start()) + 1  # (0: the file's first line)
        if (name := _TOP_DEF.match(text, start)) is not None:
            names.add(name.group(1))
    if not names:
        return []
    calls = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\(\)")
    scope = outermost(*FUNCTIONS)
    return [(m.start(), scope) for m in calls.finditer(text)]


def capability_wrappers(facts: ModuleFacts) -> dict[str, str]:
    """The module's top-level functions that only return the device capability, each with what it returns:
    ``"whole"`` (the tuple) or ``"major"`` (its ``[0]``)."""
    found: dict[str, str] = {}
    for node in facts.tree.body if facts.tree is not None else ():
        if not isinstance(node, ast.FunctionDef):
            continue
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            continue
        value, kind = body[0].value, "whole"
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and value.slice.value == 0:
            value, kind = value.value, "major"
        if (
            isinstance(value, ast.Call)
            and not value.args
            and resolve_ast(value.func, facts.imports.aliases) in CAPABILITY
        ):
            found[node.name] = kind
    return found


def _says_bf16_text(node: cst.CSTNode) -> bool:
    """Does the code of ``node`` mention bf16? Our own TODO comments (which suggest is_bf16_supported) do not count."""
    return any(BF16_WORD.search(line) for line in _code(node).splitlines() if "TODO(ascend-port)" not in line)


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


def _is_index0(subscript: cst.Subscript) -> bool:
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    return _int(subscript.slice[0].slice.value) == 0


class Bf16Rules(RotaryRules):
    """NPU304 (PrecisionTransformer): a bf16 capability check, claimed while it is visited (NPU106 and NPU108 then
    leave its call alone) and rewritten when it is left; a capability unpacked for such checks alone is removed."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._if_tests: dict[int, cst.If] = {}
        self._bf16_checks: set[int] = set()
        self._removed: set[int] = set()

    def _torch(self) -> str | None:
        return self.ctx.imports.local_name_for("torch")

    def visit_If(self, node: cst.If) -> None:
        for child, _ in _walk(node.test):
            if isinstance(child, cst.Comparison):
                self._if_tests[id(child)] = node

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

    def _is_capability_call(self, node: cst.BaseExpression, returns: str = "whole") -> TypeGuard[cst.Call]:
        """A call of get_device_capability (``returns`` "whole"), or of a module function that returns it whole
        or its major (``returns``, see capability_wrappers)."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Name) and not node.args:
            wrapped = self.ctx.fact(capability_wrappers).get(node.func.value)
            if wrapped is not None:
                return wrapped == returns
        return returns == "whole" and self.ctx.imports.resolve(node.func) in CAPABILITY

    def _direct_capability_check(self, node: cst.Comparison) -> cst.Call | None:
        """The capability call of ``cap()[0] >= 8`` or ``cap() >= (8, 0)`` (either side), else None."""
        target = node.comparisons[0]
        for side, bound, flipped in ((node.left, target.comparator, False), (target.comparator, node.left, True)):
            if isinstance(side, cst.Subscript) and self._is_capability_call(side.value) and _is_index0(side):
                if isinstance(bound, cst.Integer) and _ampere_threshold(target.operator, bound, flipped):
                    return side.value
            if self._is_capability_call(side, returns="major") and isinstance(bound, cst.Integer):
                return side if _ampere_threshold(target.operator, bound, flipped) else None
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
