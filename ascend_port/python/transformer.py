"""The shared machinery of all transforms: the per-file context, the rule-aware transformer base class, and the
composite that runs every enabled transformer in a single pass over the tree.

Each domain module (device/, distributed/, ...) defines ``PortTransformer`` subclasses. Every one of them is a
plain LibCST ``CSTTransformer`` and can run on its own; ``CompositeTransformer`` chains their ``visit_*``/``leave_*``
methods node by node so a file is walked once however many rules are enabled (one pass per rule would multiply
the cost of the whole run).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar, TypeVar, cast

import libcst as cst

from ascend_port.core.catalogue import Rule
from ascend_port.core.findings import Finding, todo_comment
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.suppression import Suppressions
from ascend_port.python.device_model import DeviceModel
from ascend_port.python.lines import start_lines
from ascend_port.python.module_facts import Fact, ModuleFacts, T
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import Scope, Trigger, statement

STATEMENT_TYPES = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
ALL_OTHERS = "*"  # PortTransformer.RUNS_AFTER: after every transformer that does not say the same
StatementT = TypeVar("StatementT", bound=cst.SimpleStatementLine | cst.BaseCompoundStatement)
# The same as a set of concrete classes: `type(node) in` is much cheaper than isinstance() on an abstract base,
# and the composite asks for every node.
_STATEMENT_CLASSES = frozenset(c for c in vars(cst).values() if isinstance(c, type) and issubclass(c, STATEMENT_TYPES))


@dataclass
class PortContext:
    """Everything a transformer may read or record while porting one file (or one chunk of it)."""

    imports: ImportIndex
    selection: Selection = field(default_factory=Selection)
    options: PortOptions = field(default_factory=PortOptions)
    findings: list[Finding] = field(default_factory=list)
    line_offset: int = 0
    # Set by rewrites whose output needs ``import torch_npu`` (see NPU100).
    uses_npu: bool = False
    uses_torch_npu_name: bool = False
    # id of an original node -> the rule that rewrites it as part of a larger construct (see claim)
    claims: dict[int, Rule] = field(default_factory=dict)
    # The whole module as Python's ast read it (None on the LibCST-only path), or a function that parses it: a rule
    # that must check a definition in another statement (the `rotate_half` an expression calls) reads it through
    # module(), since a chunk is only a statement.
    module_ast: ast.Module | Callable[[], ast.Module] | None = None
    # What was parsed of it to find the chunks: the whole module, or its head when the rest holds no trigger and
    # no import (every import of the module is in it); None on the LibCST-only path.
    module_head: ast.Module | None = None
    # What the module's devices allow (python/device_model.py), or a function that reads it once per file; None:
    # port everything (a snippet on its own).
    device_model: DeviceModel | Callable[[], DeviceModel] | None = None
    source: str = ""  # the module's text before the port (a finish step maps its lines back to the original's)
    # The module's `# ascend-port: ignore[...]` comments (core/suppression.py): a suppressed rule neither changes
    # nor reports the statement that carries one.
    suppressions: Suppressions = field(default_factory=Suppressions)
    # The answers about the whole module the rules share (python/module_facts.py): one object for all the chunks of
    # a module, so that each fact is computed once per module; made from module_ast when not given.
    module_facts: ModuleFacts | None = None
    _module: cst.Module | None = None  # the chunk being ported (its nodes' lines are computed when first needed)
    _lines: dict[int, int] | None = None
    _todo_stack: list[list[str]] = field(default_factory=list)
    _statements: list[cst.CSTNode] = field(default_factory=list)  # the statements around the node being visited

    def line_of(self, node: cst.CSTNode) -> int:
        """1-based line of ``node`` in the whole file."""
        if self._lines is None:
            if self._module is None:
                return self.line_offset + 1
            self._lines = start_lines(self._module)
        return self.line_offset + self._lines.get(id(node), 1)

    def claim(self, node: cst.CSTNode, *, by: Rule) -> None:
        """Mark ``node`` (an original node, while visiting: before any leave_* runs) as rewritten by the rule ``by``
        as part of a larger construct: the other rules leave it alone, so that one site gets one finding."""
        self.claims[id(node)] = by

    def claimed_by(self, node: cst.CSTNode) -> Rule | None:
        """The rule that claimed ``node`` (an original node), or None."""
        return self.claims.get(id(node))

    # --- the TODO comments that wait for the end of their statement (the composite writes them above it) ----------

    def statement_depth(self) -> int:
        """How many statements hold the node being visited."""
        return len(self._todo_stack)

    def pending_todos(self, *, enclosing: bool = False) -> tuple[str, ...]:
        """The TODO comments that will go above the innermost statement being visited (``enclosing``: above the
        statements around it instead)."""
        if enclosing:
            return tuple(comment for frame in self._todo_stack[:-1] for comment in frame)
        return tuple(self._todo_stack[-1]) if self._todo_stack else ()

    def defer_todos_to(self, statement: StatementT) -> StatementT:
        """Move the TODO comments pending on the innermost statement above ``statement``, which a rule puts in its
        place (the first of the two statements it splits it into)."""
        if not self._todo_stack or not self._todo_stack[-1]:
            return statement
        todos, self._todo_stack[-1][:] = list(self._todo_stack[-1]), []
        comments = [cst.EmptyLine(comment=cst.Comment(text)) for text in todos]
        return cast(StatementT, statement.with_changes(leading_lines=[*statement.leading_lines, *comments]))

    def enclosing_statements(self) -> Sequence[cst.CSTNode]:
        """The statements (original nodes) that hold the node being visited, the outermost first."""
        return self._statements

    def module(self) -> ast.Module | None:
        """The whole module before the port (parsed now if it was not yet)."""
        if callable(self.module_ast):
            self.module_ast = self.module_ast()
        return self.module_ast

    def facts(self) -> ModuleFacts:
        if self.module_facts is None:
            self.module_facts = ModuleFacts(self.module, self.imports, self.source)
        return self.module_facts

    def fact(self, fact: Fact[T]) -> T:
        """A fact of the whole module (module_facts.py), computed once per module."""
        return self.facts().get(fact)

    def devices(self) -> DeviceModel | None:
        """The module's device model (read now if it was not yet)."""
        if callable(self.device_model):
            self.device_model = self.device_model()
        return self.device_model

    def reports_only(self) -> bool:
        """Do the rules only report here (a project that also runs on other devices)?"""
        model = self.devices()
        return model is not None and model.reports_only

    def keeps(self, node: cst.CSTNode) -> bool:
        """Must ``node`` stay as it is: code of another device, or of a dispatch that already handles the NPU?"""
        model = self.devices()
        return model is not None and not model.keeps_nothing() and model.keeps(self.line_of(node))

    def suppressed(self, rule: Rule, node: cst.CSTNode | None = None, line: int | None = None) -> bool:
        """Is ``rule`` suppressed where ``node`` starts (or on ``line``) by a `# ascend-port: ignore` comment?"""
        if not self.suppressions:
            return False
        return self.suppressions.suppresses(rule.id, self.line_of(node) if node is not None else line)

    def torch_name(self) -> str:
        """How this module spells ``torch`` (``import torch as th`` -> ``th``)."""
        return self.imports.local_name_for("torch") or "torch"


class PortTransformer(cst.CSTTransformer):
    """Base of every rule implementation.

    ``TRIGGERS`` are regular-expression fragments (or ``Trigger``s, a fragment with its own scope); a statement
    whose text matches none of them is never parsed, and a transformer runs only on the chunks its own triggers
    made hot (port/python.py), so every construct a transformer rewrites must contain one of its own triggers,
    within the trigger's scope (see scopes.py): another transformer's trigger in the same statement does not count.
    """

    TRIGGERS: ClassVar[tuple[str | Trigger, ...]] = ()
    RULES: ClassVar[tuple[Rule, ...]] = ()
    # The scope of the TRIGGERS given as plain fragments: how much code around a match the transformer must see.
    SCOPE: ClassVar[Scope] = staticmethod(statement)
    # Rewrites and TODOs in code the device model keeps (another device's, or a dispatch that handles the NPU) are
    # dropped, unless the transformer is the one that reasons about that code (rules/multidevice.py).
    SEES_KEPT_CODE: ClassVar[bool] = False
    # In a project that keeps its other devices, its rewrites dispatch on the tensor's device and keep the original
    # for the others (rules/attention/norms.py's fused ops): a module they alone port still imports without torch_npu.
    DISPATCHES_ON_DEVICE: ClassVar[bool] = False
    # The rules whose rewrites every device runs as it ran the original (a try-import whose last fallback is the
    # original import: NPU501, NPU508; a project's own accelerator or torch.accelerator: NPU122): made also in a
    # project that supports the NPU already, where the others only report, and there they need no torch_npu import.
    DEVICE_NEUTRAL: ClassVar[frozenset[Rule]] = frozenset()
    # The transformers (class names) whose leave_* handlers and file-level step must run before this one's, on the
    # same node and the same text; ALL_OTHERS: every transformer that does not itself say ALL_OTHERS. The order the
    # composite runs them in (port/transformers.TRANSFORMERS) is checked against these by tests/test_layout.py.
    RUNS_AFTER: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: PortContext) -> None:
        super().__init__()
        self.ctx = ctx

    @classmethod
    def triggers(cls) -> tuple[Trigger, ...]:
        return tuple(t if isinstance(t, Trigger) else Trigger(t, cls.SCOPE) for t in cls.TRIGGERS)

    @classmethod
    def active(cls, selection: Selection) -> bool:
        return any(selection.enabled(r) for r in cls.RULES)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        """A file-level step after every chunk is ported, for what no single statement can decide (a helper the
        rewritten calls need, an import they made unused). ``tree()`` is ``text`` parsed (parsed when first asked
        for: decide what you can from the text first); ``ctx.module()`` is the module before the port. Returns
        the new text (which must parse); by default, ``text`` unchanged."""
        return text

    def enabled(self, rule: Rule) -> bool:
        return self.ctx.selection.enabled(rule)

    def fix(
        self,
        rule: Rule,
        original: cst.CSTNode,
        replacement,
        message: str,
        *,
        torch_npu_name: bool = False,
        needs_torch_npu: bool = True,
    ):
        """Record a rewrite and return ``replacement`` when ``rule`` is enabled; else return None.

        Callers use ``return self.fix(...) or updated`` so a disabled rule leaves the node alone. A disabled rule
        records nothing: --select/--ignore/--min-confidence mean the rule does not run. ``needs_torch_npu=False``:
        the replacement calls nothing of torch_npu's (a CUDA skip guard), so the module gets no import for it.
        """
        if not self.enabled(rule) or (not self.SEES_KEPT_CODE and self.ctx.keeps(original)):
            return None
        if self.ctx.suppressed(rule, original):
            return None  # (the user said: not here; nothing recorded, so no `import torch_npu` for it either)
        if not self.SEES_KEPT_CODE and self.ctx.reports_only():
            neutral = rule in self.DEVICE_NEUTRAL
            self.ctx.findings.append(Finding(rule, self.ctx.line_of(original), message, applied=neutral))
            return replacement if neutral else None
        self.ctx.findings.append(Finding(rule, self.ctx.line_of(original), message, applied=True))
        self.ctx.uses_npu |= needs_torch_npu
        self.ctx.uses_torch_npu_name |= torch_npu_name
        return replacement

    def todo(self, rule: Rule, original: cst.CSTNode, message: str) -> None:
        """Record a finding and leave a TODO comment on the line above the enclosing statement."""
        if not self.enabled(rule) or (not self.SEES_KEPT_CODE and self.ctx.keeps(original)):
            return
        if self.ctx.suppressed(rule, original):
            return
        applied = not self.ctx.reports_only()  # (in a project that also runs elsewhere: reported, no comment)
        self.ctx.findings.append(Finding(rule, self.ctx.line_of(original), message, applied=applied, todo=True))
        if self.ctx._todo_stack and applied:
            comment = todo_comment(rule, message)
            if comment not in self.ctx._todo_stack[-1]:
                self.ctx._todo_stack[-1].append(comment)


_VISIT = re.compile(r"^visit_([A-Z][A-Za-z]*)$")
_LEAVE = re.compile(r"^leave_([A-Z][A-Za-z]*)$")
_ATTRIBUTE_HOOK = re.compile(r"^(?:visit|leave)_[A-Z][A-Za-z]*_\w+$")


@cache
def _hooks(cls: type) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(node type, method name) of the visit_*/leave_* methods ``cls`` overrides. Computed once per class: dir() of
    a CSTTransformer lists hundreds of names, and a composite is built for every chunk of every file."""
    visits: list[tuple[str, str]] = []
    leaves: list[tuple[str, str]] = []
    for attr in dir(cls):
        if _ATTRIBUTE_HOOK.match(attr) and getattr(cls, attr) is not getattr(cst.CSTTransformer, attr, None):
            raise TypeError(f"{cls.__name__}.{attr}: attribute hooks are not run in a CompositeTransformer")
        for pattern, found in ((_VISIT, visits), (_LEAVE, leaves)):
            if (m := pattern.match(attr)) and getattr(cls, attr) is not getattr(cst.CSTTransformer, attr, None):
                found.append((m.group(1), attr))
    return tuple(visits), tuple(leaves)


class CompositeTransformer(cst.CSTTransformer):
    """Runs several PortTransformers in one pass and attaches their TODO comments to statements."""

    def __init__(self, ctx: PortContext, members: Sequence[PortTransformer]) -> None:
        super().__init__()
        self.ctx = ctx
        self._visits: dict[str, list[Callable]] = defaultdict(list)
        self._leaves: dict[str, list[Callable]] = defaultdict(list)
        for member in members:
            visits, leaves = _hooks(type(member))
            for node_type, attr in visits:
                self._visits[node_type].append(getattr(member, attr))
            for node_type, attr in leaves:
                self._leaves[node_type].append(getattr(member, attr))
        self._header_comments: set[str] = set()
        self._first_statement: cst.CSTNode | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.Module:
            module = cast(cst.Module, node)  # (`type() is`: cheaper than isinstance() on every node)
            self._header_comments = {line.comment.value for line in module.header if line.comment}
            self._first_statement = module.body[0] if module.body else None
        elif kind in _STATEMENT_CLASSES:
            self.ctx._todo_stack.append([])
            self.ctx._statements.append(node)
        visitors = self._visits.get(kind.__name__)
        if not visitors:
            return True
        results = [visit(node) for visit in visitors]
        return not all(r is False for r in results)

    # LibCST asks every visitor about every field of every node (a getattr of a formatted name each time): no
    # member has such hooks (_hooks refuses them), so the composite answers at once.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node, updated_node):
        name = type(original_node).__name__
        for leave in self._leaves.get(name, ()):
            updated_node = leave(original_node, updated_node)
            if type(updated_node).__name__ != name:
                break  # replaced by another kind of node (or removed): the remaining handlers do not apply
        if type(original_node) in _STATEMENT_CLASSES:
            todos = self.ctx._todo_stack.pop()
            self.ctx._statements.pop()
            if todos and type(updated_node) in _STATEMENT_CLASSES:
                updated_node = self._with_todos(original_node, updated_node, todos)
        return updated_node

    def _with_todos(self, original, updated, todos: list[str]):
        existing = {line.comment.value for line in updated.leading_lines if line.comment}
        if original is self._first_statement:
            existing |= self._header_comments
        new_lines = [cst.EmptyLine(indent=True, comment=cst.Comment(text)) for text in todos if text not in existing]
        if not new_lines:
            return updated
        return updated.with_changes(leading_lines=[*updated.leading_lines, *new_lines])


def run_transformers(module: cst.Module, ctx: PortContext, classes: Sequence[type[PortTransformer]]) -> cst.Module:
    """Apply the enabled transformers to ``module`` in one pass; findings go to ``ctx``."""
    members = [cls(ctx) for cls in classes if cls.active(ctx.selection)]
    if not members:
        return module
    ctx._module, ctx._lines = module, None
    return module.visit(CompositeTransformer(ctx, members))
