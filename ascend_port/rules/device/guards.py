"""NPU108, NPU112: the device's capability probes (`get_device_capability()`, `get_device_properties()`), which
return None or lack fields on an NPU, and the SM gates of CUDA-only features they feed."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.comparisons import compared
from ascend_port.python.device_facts import BF16_WORD, CAPABILITY_CALLS, CUDA_FEATURE, PROBES, PROPERTIES_CALLS
from ascend_port.rules.device.base import _CONTEXT_STATEMENTS, DeviceRules, _code, _descendants, _uses_walk
from ascend_port.rules.device.strings import rewrite_device_expr

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


DEVICE_CAPABILITY = rule(
    "NPU108",
    "device-capability",
    LOW,
    "CUDA capability checks (`get_device_capability()`, `get_device_properties().major`) stay CUDA checks: TODO.",
    """
    `torch.npu.get_device_capability()` returns None unless `TORCH_NPU_DEVICE_CAPABILITY` is set, so
    `cap[0] >= 8` raises TypeError; `get_device_properties(d).major/.minor/.multi_processor_count` do not exist
    (in a module that imports triton, triton-core-count ports `.multi_processor_count` instead).
    A probe whose result is indexed, unpacked, compared or has those attributes read (directly, or through the
    variable or `self.` attribute it is stored in, anywhere in the module) is a guard: it is never renamed to
    torch.npu, nor are its arguments, and this rule leaves a TODO: test the feature you need instead
    (`torch.npu.is_bf16_supported()`). The CUDA tests that lead to it stay CUDA tests too, so that on an NPU host
    the CUDA-only code is skipped instead of failing: a `torch.cuda.is_available()` or `x.device.type != "cuda"`
    in the same `and`/`or` chain, or in an early exit before it in the same block (`if not
    torch.cuda.is_available(): return ...`, `assert device.type == "cuda"`), or the test of an `if` around it, and
    the `torch.cuda.device_count()` that bounds a `for` loop over such probes (`for gpu in range(num_gpus):`: ported
    alone, the loop would run on an NPU host and the probe raise). A name
    imported from torch.cuda for such a check keeps its import. An Ampere test that chooses bf16 is rewritten by
    NPU304, and an SM gate of a CUDA-only feature to `False` by NPU112. Any other use is renamed by NPU106 and keeps
    this TODO; since a guard stays a torch.cuda call, a later scan of the ported file reports every one again.

    Before:
        import torch
        major, minor = torch.cuda.get_device_capability()
    After:
        import torch
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: ...
        major, minor = torch.cuda.get_device_capability()
    """,
)


FEATURE_GATE = rule(
    "NPU112",
    "cuda-feature-gate",
    MEDIUM,
    "An SM gate of a CUDA-only feature (FP8, TF32, TMA, Triton, TensorRT, CUDA graphs, ...) -> `False`.",
    """
    A comparison of the compute capability that turns a feature on for new enough GPUs
    (`get_device_capability()[0] >= 9`, `get_device_capability() >= (8, 9)`, `get_device_properties(0).major == 9`),
    in an `if` test, an assignment or a `return` whose code (or the enclosing function's name) names a CUDA-only
    feature: FP8/NVFP4, TF32, TMA/WGMMA, Hopper or Blackwell, Triton, TensorRT, CUDA graphs, TileLang, CUTLASS,
    flash-attn, DeepGEMM. On an NPU the feature is off, so the comparison becomes `False` (the probe, which would
    return None there, is gone). Any other capability check keeps NPU108's TODO; an `assert` is never changed.
    Medium: the intent is read from names.

    Before:
        import torch
        use_fp8 = torch.cuda.get_device_capability() >= (8, 9)
    After:
        import torch
        use_fp8 = False
    """,
)
ADVISORY_CAPABILITY_CHECK = rule(
    "NPU115",
    "advisory-capability-check",
    Confidence.MEDIUM,
    "An `if` on the compute capability that only warns, prints or logs is removed: on an NPU its probe raises first.",
    """
    `torch.cuda.get_device_capability()` raises on a host without CUDA, so a check that only gives advice
    (`if cap[0] < 8: warnings.warn("no bf16 on this GPU")`) stops the program at start-up on an NPU. An `if`
    whose test reads a capability probe and whose every branch only warns, prints or logs (`warnings.warn`,
    `print`, a logger's `debug`...`critical`, `pass`) is removed, and with it a probe assignment
    (`major, minor = torch.cuda.get_device_capability()`) that only such checks read. The `if
    torch.cuda.is_available():` around them guards no probe then: it goes where nothing else is left in it, and is
    ported with the rest where something is (it does not stay a CUDA test that an NPU host never enters). A check
    that does anything else (chooses a dtype, raises, returns) stays NPU108's guard; an SM gate of a CUDA-only
    feature is NPU112's.

    Before:
        import warnings

        import torch


        def main():
            if torch.cuda.get_device_capability()[0] < 8:
                warnings.warn("bf16 is not supported on this GPU: training in fp16")
            return torch.ones(2).cuda()
    After:
        import warnings

        import torch


        def main():
            return torch.ones(2).npu()
    """,
)


CAPABILITY_TODO = "get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()"


CAPABILITY_KEPT_TODO = (
    "get_device_capability() returns None on NPU, so the call stays on torch.cuda: "
    "test the feature instead, e.g. torch.npu.is_bf16_supported()"
)


NPU_PROPERTIES = "only name, total_memory, L2_cache_size, cube_core_num, vector_core_num"


# What only gives advice: warnings.warn, print, a logger's methods (by the receiver's name), pass.
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}


def _advice(statement: cst.BaseStatement, resolve) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return False
        func = small.value.func
        if resolve(func) == "warnings.warn" or isinstance(func, cst.Name) and func.value == "print":
            continue
        if not (
            isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS and "log" in _code(func.value).lower()
        ):
            return False
    return True


def _advises_only(node: cst.If, resolve) -> bool:
    """Does every branch of the `if` (its `elif`s and `else` too) only give advice?"""
    if not isinstance(node.body, cst.IndentedBlock) or not all(_advice(s, resolve) for s in node.body.body):
        return False
    orelse = node.orelse
    if orelse is None:
        return True
    if isinstance(orelse, cst.If):
        return _advises_only(orelse, resolve)
    return isinstance(orelse.body, cst.IndentedBlock) and all(_advice(s, resolve) for s in orelse.body.body)


def _reads(statement: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(node, cst.Name) and node.value in names for node in _descendants(statement))


def _chain_nodes(
    node: cst.CSTNode, comparison: cst.Comparison | None, statement: cst.CSTNode | None
) -> Iterator[tuple[cst.CSTNode, cst.Comparison | None, cst.CSTNode | None]]:
    """Every node under ``node``, each with the innermost comparison and `if`/`while`/simple statement around it."""
    statement = node if isinstance(node, _CONTEXT_STATEMENTS) else statement
    yield node, comparison, statement
    inner = node if isinstance(node, cst.Comparison) else comparison
    for child in node.children:
        yield from _chain_nodes(child, inner, statement)


def _use_as_gate(name: cst.Name, ancestors: tuple[cst.CSTNode, ...], kind: str) -> cst.Comparison | None:
    """The comparison when the probe's variable ``name`` is used as an SM gate: ``major >= 9`` ("version"),
    ``cap[0] >= 9`` or ``cap >= (8, 9)`` ("capability"), ``props.major == 9`` ("properties"); else None."""
    parents = list(ancestors)
    operand: cst.CSTNode = name
    if kind == "capability" and parents and isinstance(parents[-1], cst.Subscript) and parents[-1].value is name:
        operand = parents.pop()
    elif kind == "properties":
        if not (parents and isinstance(parents[-1], cst.Attribute) and parents[-1].attr.value in ("major", "minor")):
            return None
        operand = parents.pop()
    found = compared(operand, parents)
    if found is None:
        return None
    comparison, bound, operator, flipped = found
    if isinstance(bound, cst.Tuple) != (kind == "capability" and operand is name):
        return None
    return comparison if _version_bound(bound) and _turns_on(operator, flipped) else None


def _chain_operands(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of an and/or chain, nested chains flattened and `not` taken off."""
    if isinstance(node, cst.BooleanOperation):
        yield from _chain_operands(node.left)
        yield from _chain_operands(node.right)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _chain_operands(node.expression)
    else:
        yield node


def _version_bound(node: cst.BaseExpression) -> bool:
    """An SM version: ``9``, ``(8, 9)``, or a collection of them (``in (9, 10)``)."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and node.elements:
        return all(_version_bound(e.value) for e in node.elements if isinstance(e, cst.Element))
    return False


def _turns_on(operator: cst.BaseCompOp, flipped: bool) -> bool:
    """Is ``<probe> operator bound`` (``bound operator <probe>`` when flipped) true for new enough GPUs?"""
    if flipped:
        return isinstance(operator, (cst.LessThan, cst.LessThanEqual, cst.Equal))
    return isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.In))


class GuardRules(DeviceRules):
    """NPU108, NPU112: capability probes and the guards they feed. What they keep as CUDA code, the layers above
    leave alone (``_keep_depth``, ``_kept_calls``, ``_kept_attributes``, ``_kept_comparisons``)."""

    def visit_If(self, node: cst.If) -> None:
        super().visit_If(node)
        # `if torch.cuda.is_available():` around a probe kept as a CUDA call stays a CUDA test (NPU108): renamed, it
        # would lead an NPU host into the torch.cuda call, which fails there.
        if not self._keep_depth and self._cuda_test(node.test) and self._has_kept_guard(self._after_advice(node.body)):
            self._keep_availability(node.test)

    def _after_advice(self, block: cst.BaseSuite) -> cst.BaseSuite:
        """``block`` without the advisory checks NPU115 removes from it: a probe they read guards nothing once they
        are gone (`if torch.cuda.is_available(): if cap()[0] < 8: warn(...); model.cuda()` ports its test)."""
        if not isinstance(block, cst.IndentedBlock) or not self.enabled(ADVISORY_CAPABILITY_CHECK):
            return block
        advisory = self._advisory_statements(list(block.body))
        return block.with_changes(body=[s for s in block.body if id(s) not in advisory]) if advisory else block

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.imports.resolve(node.func)
        if qualified not in PROBES or self.ctx.claimed_by(node.func) is not None:
            return  # (claimed: NPU304 rewrites a bf16 check)
        self._probe_functions.add(id(node.func))
        if id(node) in self._gate_calls:
            self._keep(node)  # NPU112 replaces the whole comparison: nothing inside it is ported on its own
            return
        used = self._guard_use(node, qualified)
        capability = qualified in CAPABILITY_CALLS
        if used is None:
            if capability:
                self.todo(DEVICE_CAPABILITY, node, CAPABILITY_TODO)
            return
        kept = qualified.startswith("torch.cuda.") and self._spelled_as_cuda(node.func)
        if kept:
            self._keep(node)
        if capability:
            message = CAPABILITY_KEPT_TODO if kept else CAPABILITY_TODO
        else:
            message = f"NPU device properties have no {used} ({NPU_PROPERTIES})" + (
                ", so the call stays on torch.cuda: test the feature instead" if kept else ": test the feature instead"
            )
        self.todo(DEVICE_CAPABILITY, node, message)

    def _keep(self, call: cst.Call) -> None:
        self._kept_calls.add(id(call))
        self._keep_depth += 1

    def _guard_use(self, call: cst.Call, qualified: str) -> str | None:
        """How the probe's result is used as a guard ("" for a capability, ".major/.minor" for properties), else
        None. Read from the whole module (a variable may be read far away); where Python's ``ast`` cannot read
        it, a capability is taken for a guard and properties only where an attribute is read right off the call."""
        facts = self._facts()
        direct = self._read_off_call.get(id(call))
        if facts is None:
            return "" if qualified in CAPABILITY_CALLS else direct
        return facts.guard(self.ctx.line_of(call.func)) if direct is None else direct

    def _spelled_as_cuda(self, func: cst.BaseExpression) -> bool:
        """``torch.cuda.X`` (a CUDA probe this rule keeps by not renaming it) or a name imported from torch.cuda
        (whose import is kept for it); not ``tc.X`` through ``import torch.cuda as tc``, whose import is renamed."""
        if isinstance(func, cst.Attribute):
            return isinstance(func.value, cst.Attribute) and func.value.attr.value == "cuda"
        return isinstance(func, cst.Name)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        statement = self._statements[-1] if self._statements else None
        if (call := self._gate_probe(node, statement)) is not None:
            self._gate_calls.add(id(call))
            self._off.add(id(node))

    def _gate_probe(self, node: cst.Comparison, statement: cst.CSTNode | None) -> cst.Call | None:
        """The probe of an SM gate of a CUDA-only feature (NPU112): ``cap()[0] >= 9``, ``cap() >= (8, 9)``,
        ``props().major == 9`` (either side), in an `if` test or a simple statement (never an `assert`) whose code,
        or the enclosing function's name, names such a feature (and not bf16: NPU304's). Memoized: the chains
        and blocks around it ask first."""
        if id(node) not in self._gates:
            self._gates[id(node)] = self._find_gate_probe(node, statement)
        return self._gates[id(node)]

    def _find_gate_probe(self, node: cst.Comparison, statement: cst.CSTNode | None) -> cst.Call | None:
        if not self.enabled(FEATURE_GATE) or len(node.comparisons) != 1:
            return None
        target = node.comparisons[0]
        for side, bound, flipped in ((node.left, target.comparator, False), (target.comparator, node.left, True)):
            call = self._probe_of(side)
            if (
                call is not None
                and self.ctx.claimed_by(call.func) is None
                and _version_bound(bound)
                and _turns_on(target.operator, flipped)
                and self._context(node, statement) == "feature"
            ):
                return call
        return None

    def _probe_of(self, expr: cst.BaseExpression) -> cst.Call | None:
        """The probe call of ``cap()``, ``cap()[0]`` or ``props().major``/``.minor``."""
        if isinstance(expr, cst.Subscript):
            expr = expr.value
            probes = CAPABILITY_CALLS
        elif isinstance(expr, cst.Attribute) and expr.attr.value in ("major", "minor"):
            expr = expr.value
            probes = PROPERTIES_CALLS
        else:
            probes = CAPABILITY_CALLS
        if isinstance(expr, cst.Call) and self.ctx.imports.resolve(expr.func) in probes:
            return expr
        return None

    def _context(self, comparison: cst.Comparison, statement: cst.CSTNode | None) -> str | None:
        """What a capability comparison is about: "bf16" (NPU304's, whatever its shape), "feature" (a CUDA-only
        feature, NPU112's), or None. Read from the `if` it tests (test and body) or its simple statement (never an
        `assert`), and the names of the functions around it."""
        if isinstance(statement, cst.If) and any(n is comparison for n in _descendants(statement.test)):
            text = _code(statement.test) + "\n" + _code(statement.body)
        elif isinstance(statement, cst.SimpleStatementLine) and not any(
            isinstance(s, cst.Assert) for s in statement.body
        ):
            text = _code(statement)
        else:
            return None
        text = "\n".join(line for line in text.splitlines() if "TODO(ascend-port)" not in line)
        definitions = self._definitions()
        names = [f.name for f, _ in definitions.around(self.ctx.line_of(comparison))] if definitions else []
        if BF16_WORD.search(text) or any(BF16_WORD.search(n) for n in names):
            return "bf16"
        if CUDA_FEATURE.search(text) or any(CUDA_FEATURE.search(n) for n in names):
            return "feature"
        return None

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """NPU112's variable form (``major, minor = cap()`` or ``props = get_device_properties(0)`` whose every
        later use in the block is an SM gate of a CUDA-only feature: the gates become False and the probe goes),
        and the early exit before a kept guard (``if not torch.cuda.is_available(): return`` stays CUDA)."""
        if self._keep_depth:
            return
        body = list(node.body)
        if self.enabled(ADVISORY_CAPABILITY_CHECK):
            self._advisory_checks(body)
        bf16: bool | None = None
        for i, stmt in enumerate(body):
            found = self._probe_assignment(stmt)
            if found is None or self.ctx.claimed_by(found[0].func) is not None:
                continue
            if bf16 is None:
                bf16 = self._mentions_bf16(node)
            if bf16:
                break  # NPU304 may remove a statement of this block: two removals in one block would not line up
            gates = self._gate_uses(body[i + 1 :], found[1])
            if gates:
                self._off.update(gates)
                self._removed.add(id(stmt))
                self._gate_calls.add(id(found[0]))
        for i, stmt in enumerate(body[:-1]):
            test = self._early_exit(stmt)
            if test is not None and any(self._has_kept_guard(later) for later in body[i + 1 :]):
                self._keep_availability(test)

    def _advisory_checks(self, body: list[cst.BaseStatement]) -> None:
        """NPU115: the `if` statements of ``body`` on a capability probe whose branches only give advice, and the
        probe assignments that only such checks read (removed by leave_IndentedBlock)."""
        found = self._advisory_statements(body)
        for stmt in body:
            if id(stmt) not in found:
                continue
            self._advisory.add(id(stmt))
            if isinstance(stmt, cst.If):
                self._gate_calls.update(id(call) for call in self._probes(stmt.test))
                self._keep_availability(stmt.test)  # (no rewrite inside what goes: no finding for it)
            elif (assignment := self._probe_assignment(stmt)) is not None:
                self._gate_calls.add(id(assignment[0]))

    def _advisory_statements(self, body: list[cst.BaseStatement]) -> set[int]:
        """The ids of NPU115's statements in ``body``: `if`s on a capability probe whose branches only give advice,
        and the probe assignments that only such checks read."""
        advisory = [isinstance(s, cst.If) and _advises_only(s, self.ctx.imports.resolve) for s in body]
        found = {
            id(s) for s, advice in zip(body, advisory) if advice and isinstance(s, cst.If) and self._probes(s.test)
        }
        for i, stmt in enumerate(body):
            if advisory[i]:
                continue
            assignment = self._probe_assignment(stmt)
            if assignment is None or self.ctx.claimed_by(assignment[0].func) is not None:
                continue
            readers = [j for j in range(i + 1, len(body)) if _reads(body[j], set(assignment[1]))]
            if readers and all(advisory[j] for j in readers):
                found.update([id(stmt), *(id(body[j]) for j in readers)])
        return found

    def _probes(self, test: cst.BaseExpression) -> list[cst.Call]:
        """The capability probes called in ``test`` (none claimed by another rule)."""
        return [
            node
            for node in _descendants(test)
            if isinstance(node, cst.Call)
            and self.ctx.imports.resolve(node.func) in PROBES
            and self.ctx.claimed_by(node.func) is None
        ]

    def _probe_assignment(self, stmt: cst.BaseStatement) -> tuple[cst.Call, dict[str, str]] | None:
        """``x = cap()`` -> (call, {x: "capability"}); ``major, minor = cap()`` and ``major = cap()[0]`` ->
        (call, {major: "version", ...}); ``props = get_device_properties(0)`` -> (call, {props: "properties"})."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        assign = stmt.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target, value = assign.targets[0].target, assign.value
        resolve = self.ctx.imports.resolve
        if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
            names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
            if isinstance(value, cst.Call) and resolve(value.func) in CAPABILITY_CALLS and len(names) == 2:
                return value, {n: "version" for n in names if n != "_"}
            return None
        if not isinstance(target, cst.Name):
            return None
        if isinstance(value, cst.Call) and resolve(value.func) in PROBES:
            kind = "capability" if resolve(value.func) in CAPABILITY_CALLS else "properties"
            return value, {target.value: kind}
        call = self._probe_of(value)
        if call is not None and call is not value:
            return call, {target.value: "version"}
        return None

    def _gate_uses(self, stmts: list[cst.BaseStatement], kinds: dict[str, str]) -> set[int]:
        """The ids of the SM gates that are every use of the names ``kinds`` in ``stmts``; empty if any use is not
        one (or there is none)."""
        gates: set[int] = set()
        for stmt in stmts:
            for node, ancestors, statement in _uses_walk(stmt, (), None):
                if not isinstance(node, cst.Name) or node.value not in kinds:
                    continue
                comparison = _use_as_gate(node, ancestors, kinds[node.value])
                if comparison is None or self._context(comparison, statement) != "feature":
                    return set()
                gates.add(id(comparison))
        return gates

    def _mentions_bf16(self, block: cst.IndentedBlock) -> bool:
        """Does the block's code (our TODOs aside) or a function around it say bf16 (NPU304's evidence)?"""
        if any(BF16_WORD.search(line) for line in _code(block).splitlines() if "TODO(ascend-port)" not in line):
            return True
        definitions = self._definitions()
        around = definitions.around(self.ctx.line_of(block)) if definitions is not None else []
        return any(BF16_WORD.search(f.name) for f, _ in around)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if any(self._emptied(old, new) for old, new in zip(original.body, updated.body)):
            # `if torch.cuda.is_available():` around an advisory check it no longer holds: nothing left to guard
            kept = [(old, new) for old, new in zip(original.body, updated.body) if not self._emptied(old, new)]
            original = original.with_changes(body=[old for old, _ in kept])
            updated = updated.with_changes(body=[new for _, new in kept])
        if not any(id(s) in self._removed or id(s) in self._advisory for s in original.body):
            return updated
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for old, new in zip(original.body, updated.body):
            if not isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                body.append(new)
                continue
            if id(old) in self._removed and self.fix(
                FEATURE_GATE, old, True, "capability probe removed (only used by SM gates of CUDA-only features)"
            ):
                carried += list(new.leading_lines)  # its comments stay, above the next statement
                continue
            if id(old) in self._advisory and self.fix(
                ADVISORY_CAPABILITY_CHECK, old, True, "advisory capability check removed (the probe raises on NPU)"
            ):
                carried += list(new.leading_lines)
                continue
            if carried:
                if any(line.comment for line in carried) or not new.leading_lines:
                    new = new.with_changes(leading_lines=[*carried, *new.leading_lines])
                carried = []
            body.append(new)
        return updated.with_changes(body=body)

    def _emptied(self, old: cst.CSTNode, new: cst.CSTNode) -> bool:
        """An `if` on CUDA's availability, without `else`, whose whole body was advice this rule removed."""
        return (
            isinstance(old, cst.If)
            and isinstance(new, cst.If)
            and old.orelse is None
            and isinstance(new.body, cst.IndentedBlock)
            and not new.body.body
            and all(id(s) in self._advisory or id(s) in self._removed for s in old.body.body)
            and self._cuda_test(old.test)
        )

    def _early_exit(self, stmt: cst.BaseStatement) -> cst.BaseExpression | None:
        """The test of ``if not torch.cuda.is_available(): return ...`` (or raise, without else) or of ``assert
        x.device.type == "cuda"``, when it tests CUDA: the rest of the block is CUDA-only."""
        test: cst.BaseExpression | None = None
        if isinstance(stmt, cst.If) and stmt.orelse is None and stmt.body.body:
            last: cst.CSTNode = stmt.body.body[-1]
            if isinstance(last, cst.SimpleStatementLine):
                last = last.body[-1]
            test = stmt.test if isinstance(last, (cst.Return, cst.Raise)) else None
        elif isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assert):
            test = stmt.body[0].test
        return test if test is not None and self._cuda_test(test) else None

    def _cuda_test(self, test: cst.BaseExpression) -> bool:
        """Does the and/or chain ``test`` ask about CUDA (`torch.cuda.is_available()`, a CUDA device string)?"""
        return any(
            self._is_availability(operand)
            or (
                isinstance(operand, cst.Comparison)
                and any(
                    isinstance(n, (cst.SimpleString, cst.FormattedString)) and rewrite_device_expr(n) is not None
                    for n in _descendants(operand)
                )
            )
            for operand in _chain_operands(test)
        )

    def _is_availability(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.ctx.imports.resolve(node.func) == "torch.cuda.is_available"

    def _has_kept_guard(self, node: cst.CSTNode) -> bool:
        return any(
            isinstance(child, cst.Call) and self._kept_guard(child, comparison, statement)
            for child, comparison, statement in _chain_nodes(node, None, None)
        )

    def _keep_availability(self, test: cst.BaseExpression) -> None:
        """The CUDA tests of a chain stay: `torch.cuda.is_available()` and comparisons with device strings."""
        for operand in _chain_operands(test):
            if self._is_availability(operand):
                assert isinstance(operand, cst.Call)
                self._kept_attributes.add(id(operand.func))
            elif isinstance(operand, cst.Comparison):
                self._kept_comparisons.add(id(operand))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """In ``torch.cuda.is_available() and <a kept CUDA guard>`` (or ``not ... or``, or ``x.device.type !=
        "cuda" or ...``) the other CUDA tests stay too: on an NPU host they are False (True), so the CUDA-only
        guard after them never runs."""
        if id(node) in self._chains or self._keep_depth:
            return
        statement = self._statements[-1] if self._statements else None
        kept = False
        for child, comparison, inner in _chain_nodes(node, None, statement):
            if isinstance(child, cst.BooleanOperation):
                self._chains.add(id(child))
            elif isinstance(child, cst.Call):
                kept = kept or self._kept_guard(child, comparison, inner)
        if kept:
            self._keep_availability(node)

    def _kept_guard(self, call: cst.Call, comparison: cst.Comparison | None, statement: cst.CSTNode | None) -> bool:
        """Will visit_Call keep this probe as a CUDA call (not NPU304's bf16 check, nor an NPU112 gate)?"""
        qualified = self.ctx.imports.resolve(call.func)
        if (
            qualified not in PROBES
            or not qualified.startswith("torch.cuda.")
            or self.ctx.claimed_by(call.func) is not None
        ):
            return False
        if id(call) in self._gate_calls:
            return False
        if comparison is not None and (
            self._gate_probe(comparison, statement) is call or self._context(comparison, statement) == "bf16"
        ):
            return False
        return self._spelled_as_cuda(call.func) and self._guard_use(call, qualified) is not None

    def leave_BooleanOperation(
        self, original: cst.BooleanOperation, updated: cst.BooleanOperation
    ) -> cst.BaseExpression:
        """Two SM gates turned off together (`major == 8 and minor == 0` -> `False and False`) read as one False."""
        pairs = ((original.left, updated.left), (original.right, updated.right))
        if isinstance(original.operator, cst.And) and all(
            isinstance(before, cst.Comparison) and isinstance(after, cst.Name) and after.value == "False"
            for before, after in pairs
        ):
            return cst.Name("False", lpar=updated.lpar, rpar=updated.rpar)
        return updated

    def _turned_off(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        """An SM gate of a CUDA-only feature that visit_Comparison or visit_IndentedBlock chose: False."""
        off = cst.Name("False", lpar=updated.lpar, rpar=updated.rpar)
        return self.fix(FEATURE_GATE, original, off, "SM gate of a CUDA-only feature -> False") or updated
