"""The device rules' common ground (rules/device/__init__.py): the state and the questions of every layer."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

import libcst as cst

from ascend_port.core import library_support, npu_api
from ascend_port.python.device_facts import DEVICE_OPERAND, PROPERTY_GAPS, Definitions, DeviceFacts
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.device.strings import DEVICE_NAME
from ascend_port.rules.triton_kernels import CORE_COUNT

_DEFINITIONS_ATTRIBUTE = "_ascend_port_device_definitions"


def _device_facts(facts: ModuleFacts, gaps: frozenset[str]) -> DeviceFacts | None:
    tree = facts.tree
    if tree is None:
        return None
    calls = functools.partial(facts.nodes, ast.Call)
    return DeviceFacts(tree, facts.imports.aliases, gaps, calls=calls, parent=facts.parent, text=facts.text)


# The device facts of a module, by the property reads that make a guard (see DeviceTransformer._gaps).
_DEVICE_FACTS = {
    gaps: functools.partial(_device_facts, gaps=gaps)
    for gaps in (PROPERTY_GAPS, PROPERTY_GAPS - {"multi_processor_count"})
}


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _descendants(child)


# Features that run on CUDA only, whose switch a device test may be (NPU105, NPU102 keep such a test CUDA's): those
# of an SM gate (NPU112), less the ones the port brings to the NPU (flash-attn's calls, TF32 as HF32), plus the
# CUDA-only libraries that turn them on.
CUDA_ONLY_FEATURE = re.compile(
    r"(?i)fp8|float8|e4m3|e5m2|nvfp4|mxfp4|triton|tensorrt|(?<![a-z])trt(?![a-z])|cuda_?graph|tilelang|cutlass"
    r"|(?<![a-z])tma(?![a-z])|wgmma|hopper|blackwell|(?<![a-z])sm_?(?:89|9\d|1\d\d)(?!\d)|deep_?gemm|marlin"
    r"|bitsandbytes|(?<![a-z])bnb(?![a-z])|nvfuser|nvshmem"
)


_CONTEXT_STATEMENTS = (cst.If, cst.While, cst.SimpleStatementLine)  # (what DeviceTransformer._statements holds)


def _uses_walk(
    node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...], statement: cst.CSTNode | None
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...], cst.CSTNode | None]]:
    """Every node under ``node`` with its ancestors and its innermost `if`/`while`/simple statement, skipping
    names that are not references (``.attr``, keywords)."""
    statement = node if isinstance(node, _CONTEXT_STATEMENTS) else statement
    yield node, ancestors, statement
    inner = (*ancestors, node)
    if isinstance(node, cst.Attribute):
        yield from _uses_walk(node.value, inner, statement)
        return
    for child in node.children:
        if isinstance(node, cst.Arg) and child is node.keyword:
            continue
        yield from _uses_walk(child, inner, statement)


def switches_cuda_only_feature(comparison: cst.CSTNode, statement: cst.CSTNode | None) -> bool:
    """Is ``comparison`` (part of) the test of ``statement``, an `if`, or inside a simple statement (`use_fp8 = fp8
    and device == "cuda"`, an `assert`), whose code names a CUDA-only feature (CUDA_ONLY_FEATURE)? Our TODO lines
    aside. (NPU105 keeps such a test a CUDA test, NPU102 such an `.is_cuda`; NPU120 does not add "npu" to its list of
    devices.)"""
    if isinstance(statement, cst.If) and any(n is comparison for n in _descendants(statement.test)):
        text = _code(statement.test) + "\n" + _code(statement.body)
        text += "\n" + _code(statement.orelse) if statement.orelse is not None else ""
    elif isinstance(statement, cst.SimpleStatementLine):
        text = _code(statement)
    else:
        return False
    return any(CUDA_ONLY_FEATURE.search(line) for line in text.splitlines() if "TODO(ascend-port)" not in line)


class DeviceRules(PortTransformer):
    """What every device rule reads: the statements around the node, the module's device facts and functions,
    what an expression holds (a device, Triton's target). A finding in a function that answers a question about
    CUDA (`is_cuda_available`) is never made: such a function keeps answering for CUDA."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.target_api(ctx.options)  # the target release (--torch-npu): what torch.npu has there
        # Nodes that are not expressions of their own: `.attr` names, keyword names, store targets, docstrings.
        self._attribute_bases: set[int] = set()
        self._members: dict[int, str] = {}  # the attribute read off each expression (`priority_range` of `X.Stream`)
        self._store_targets: set[int] = set()
        self._docstrings: set[int] = set()
        self._in_import = False  # import statements are rewritten whole, by leave_Import/leave_ImportFrom
        # `from torch import cuda` binds the name `cuda`; it becomes `from torch import npu`, so its uses follow.
        self._rename_cuda_name = ctx.imports.aliases.get("cuda") == "torch.cuda"
        # In a module that imports Lightning, `accelerator` is Lightning's accelerator name, which rejects "npu".
        lightning = library_support.imports_lightning(ctx.imports.aliases)
        self._device_name = library_support.DEVICE_NAME_IN_LIGHTNING if lightning else DEVICE_NAME
        self._device_operand = library_support.DEVICE_OPERAND_IN_LIGHTNING if lightning else DEVICE_OPERAND
        # Guards (NPU108, NPU112): capability probes kept as CUDA calls, with everything inside them (a depth, since
        # leave_Call and leave_Attribute of what is inside run before the probe's own leave_Call), the
        # `torch.cuda.is_available()` calls of their and/or chains, the probes visit_Call looked at, the
        # properties attributes read right off a probe, and the SM gates NPU112 turns off (with their probes).
        self._keep_depth = 0
        self._kept_calls: set[int] = set()
        self._kept_attributes: set[int] = set()
        self._probe_functions: set[int] = set()
        self._read_off_call: dict[int, str] = {}
        self._gates: dict[int, cst.Call | None] = {}
        self._gate_calls: set[int] = set()
        self._off: set[int] = set()  # comparisons NPU112 turns into False
        self._removed: set[int] = set()  # probe assignments NPU112 removes
        self._advisory: set[int] = set()  # advisory checks NPU115 removes, with the probe assignments they read
        self._kept_comparisons: set[int] = set()  # device comparisons of a chain with a kept guard
        self._chains: set[int] = set()
        self._statements: list[cst.CSTNode] = []  # the enclosing `if`/`while` statements and simple statement lines
        self._reads_triton = any(t == "triton" or t.startswith("triton.") for t in ctx.imports.aliases.values())
        # In Triton launch code CORE_COUNT turns `.multi_processor_count` into the NPU's core count: no guard there.
        sm_count = self._reads_triton and ctx.selection.enabled(CORE_COUNT)
        self._gaps = PROPERTY_GAPS - {"multi_processor_count"} if sm_count else PROPERTY_GAPS

    # --- bookkeeping -------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attribute_bases.add(id(node.value))
        self._members[id(node.value)] = node.attr.value
        if node.attr.value in self._gaps and isinstance(node.value, cst.Call):
            self._read_off_call[id(node.value)] = f".{node.attr.value}"

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def leave_SimpleStatementLine(self, original, updated):
        self._statements.pop()
        return updated

    def visit_If(self, node: cst.If) -> None:
        self._statements.append(node)

    def leave_If(self, original, updated):
        self._statements.pop()
        return updated

    def visit_While(self, node: cst.While) -> None:
        self._statements.append(node)

    def leave_While(self, original, updated):
        self._statements.pop()
        return updated

    def _facts(self) -> DeviceFacts | None:
        """The whole module's facts (None when Python's ``ast`` cannot read it), read once per file."""
        return self.ctx.fact(_DEVICE_FACTS[self._gaps])

    def _definitions(self) -> Definitions | None:
        """The functions around the lines being ported: the module head has them all (every trigger is in it)."""
        head = self.ctx.module_head
        if head is None:
            facts = self._facts()
            return facts.definitions if facts is not None else None
        definitions = getattr(head, _DEFINITIONS_ATTRIBUTE, None)
        if definitions is None:
            definitions = Definitions(head)
            setattr(head, _DEFINITIONS_ATTRIBUTE, definitions)
        return definitions

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store_targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store_targets.add(id(node.target))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._docstrings.add(id(node.value))

    def fix(
        self,
        rule,
        original: cst.CSTNode,
        replacement,
        message: str,
        *,
        torch_npu_name: bool = False,
        needs_torch_npu: bool = True,
    ):
        if self._in_cuda_question(original):
            return None  # `def is_cuda_available()`, `def get_cuda_capability()` keep answering for CUDA
        return super().fix(
            rule, original, replacement, message, torch_npu_name=torch_npu_name, needs_torch_npu=needs_torch_npu
        )

    def todo(self, rule, original: cst.CSTNode, message: str) -> None:
        if not self._in_cuda_question(original):
            super().todo(rule, original, message)

    def _in_cuda_question(self, node: cst.CSTNode) -> bool:
        definitions = self._definitions()
        return definitions is not None and definitions.asks_about_cuda(self.ctx.line_of(node))

    def _answers_for_cuda(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a function named for a CUDA question (`is_cuda_available`, `has_cuda`) or in an op
        builder's `is_compatible`? Their availability tests keep asking about CUDA."""
        definitions = self._definitions()
        return definitions is not None and definitions.answers_for_cuda(self.ctx.line_of(node))

    def _device_context(self, expr: cst.BaseExpression) -> bool:
        """Does ``expr``, compared with a "cuda" string, hold a device type: a device, `.type`, an accelerator?
        Anything else ("cuda" as a library's backend, an implementation's or a mode's name) is not ours, nor is
        Triton's target name (`get_current_target().backend`, and the variables and functions that hold it)."""
        return bool(self._device_operand.search(_code(expr))) and not self._holds_triton_target(expr)

    def _holds_triton_target(self, expr: cst.BaseExpression) -> bool:
        if not self._reads_triton:
            return False
        names: set[str] = set()
        calls: set[str] = set()
        for node, _, _ in _uses_walk(expr, (), None):
            if isinstance(node, cst.Name):
                names.add(node.value)
            elif isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, (cst.Name, cst.Attribute)):
                    calls.add(func.value if isinstance(func, cst.Name) else func.attr.value)
        facts = self._facts()
        return facts is not None and facts.triton_target(names, calls, self.ctx.line_of(expr))

    def _names_device(self, target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return bool(self._device_name.search(target.value))
        if isinstance(target, cst.Attribute):
            return bool(self._device_name.search(target.attr.value))
        return False
