"""What a whole module says about its CUDA probes, read once with Python's ``ast`` before the device rules run:
which ``get_device_capability()`` / ``get_device_properties()`` calls are guards (their result indexed, unpacked,
compared, or read for ``.major``), which functions ask a question about CUDA (``is_cuda_available``), and which names
hold Triton's target (``get_current_target().backend``), whose ``"cuda"`` is not a device."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

PROPERTY_GAPS = frozenset({"major", "minor", "multi_processor_count"})
CAPABILITY_CALLS = {"torch.cuda.get_device_capability", "torch.npu.get_device_capability"}
PROPERTIES_CALLS = {"torch.cuda.get_device_properties", "torch.npu.get_device_properties"}
PROBES = CAPABILITY_CALLS | PROPERTIES_CALLS
PROBE_NAMES = {"get_device_capability", "get_device_properties"}
# `torch.cuda` availability questions, which a function named for CUDA keeps asking about CUDA.
AVAILABILITY = {"is_available", "device_count", "is_initialized"}
# The functions whose span holds a line, outermost first, each with its class (None outside one).
Around = list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]
# A function whose name asks whether CUDA is there or what it can do (is_cuda_available, has_cuda,
# get_cuda_capability): it answers for CUDA. (`is_cuda_tensor`, `to_cuda` are about the device in use: ported.)
CUDA_QUESTION = re.compile(r"(?i)^_*has_cuda$|cuda\w*(?:available|enabled|supported|capabilit|arch)")
# Names and words of features that only exist on NVIDIA GPUs (NPU112's evidence).
CUDA_FEATURE = re.compile(
    r"(?i)fp8|float8|e4m3|e5m2|nvfp4|mxfp4|tf32|triton|tensorrt|(?<![a-z])trt(?![a-z])|cuda_?graph|tilelang|cutlass"
    r"|(?<![a-z])tma(?![a-z])|wgmma|hopper|blackwell|(?<![a-z])sm_?(?:89|9\d|1\d\d)(?!\d)"
    r"|flash[_ ]?attn|flash[_ ]?attention|deep_?gemm|marlin"
)
BF16_WORD = re.compile(r"(?i)bf16|bfloat")  # (NPU304's evidence: its checks are not NPU112's gates)
# What a comparison's other side must look like for a "cuda" string to be a device type (NPU105).
DEVICE_OPERAND = re.compile(r"(?i)device|accelerator|\bdev(?:_|\b)|_dev\b|\.type\b")


# --- the whole module, read once: probes used as guards, functions named for CUDA, Triton's target names ------------

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def dotted_ast(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def resolve_ast(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """``tc.synchronize`` -> ``torch.cuda.synchronize`` through the module's imports (``aliases``: local name ->
    qualified name); None for a name no import binds."""
    name = dotted_ast(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    base = aliases.get(head)
    return None if base is None else f"{base}.{rest}" if rest else base


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module or function body, not those of the functions and classes defined in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPE_NODES):
            stack.extend(ast.iter_child_nodes(node))


class Parents(Protocol):
    """Each node's parent: a dict, or the module facts' (module_facts.py) behind _ParentsOf."""

    def get(self, node: ast.AST, default: None = None, /) -> ast.AST | None: ...

    def __contains__(self, node: object, /) -> bool: ...

    def __getitem__(self, node: ast.AST, /) -> ast.AST: ...


class _ParentsOf:
    """A parent function read as the mapping ``guard_use`` and ``enclosing_node`` take."""

    def __init__(self, parent: Callable[[ast.AST], ast.AST | None]) -> None:
        self._parent = parent

    def get(self, node: ast.AST, default: None = None, /) -> ast.AST | None:
        return self._parent(node)

    def __contains__(self, node: object, /) -> bool:
        return isinstance(node, ast.AST) and self._parent(node) is not None

    def __getitem__(self, node: ast.AST, /) -> ast.AST:
        found = self._parent(node)
        if found is None:
            raise KeyError(node)
        return found


class Definitions:
    """The functions of a module with their line spans and the classes that hold them (from its ``ast``)."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions: list[tuple[int, int, ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
        self._collect(tree, None)

    def _collect(self, node: ast.AST, cls: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTION_NODES):
                self.functions.append((child.lineno, child.end_lineno or child.lineno, child, cls))
                self._collect(child, None)
            elif isinstance(child, ast.ClassDef):
                self._collect(child, child)
            elif isinstance(child, ast.stmt):
                self._collect(child, cls)

    def around(self, line: int) -> Around:
        """The functions whose span holds ``line``, outermost first, each with its class (None outside one)."""
        return [(f, cls) for start, end, f, cls in self.functions if start <= line <= end]

    def asks_about_cuda(self, line: int) -> bool:
        """Is ``line`` in a function whose name asks about CUDA (`is_cuda_available`, `get_cuda_capability`)?"""
        return any(CUDA_QUESTION.search(function.name) for function, _ in self.around(line))

    def answers_for_cuda(self, line: int) -> bool:
        """Is ``line`` in a function that asks about CUDA by its name, or in an op builder's `is_compatible`?"""
        for function, cls in self.around(line):
            if CUDA_QUESTION.search(function.name):
                return True
            if function.name == "is_compatible" and cls is not None:
                bases = (dotted_ast(b) or "" for b in cls.bases)
                if cls.name.endswith("Builder") or any(b.endswith("Builder") for b in bases):
                    return True
        return False


class DeviceFacts:
    """What no single statement of a module shows, read from the whole module's ``ast``: which capability probes
    are guards (NPU108) and which names hold Triton's target name (NPU104/NPU105). Each part is computed when first
    asked for; ``calls`` and ``parent`` are the module's calls and each node's parent when the caller has them
    (module_facts.py: the one walk of the module), ``text`` its source (a module that calls no probe has no guard)."""

    def __init__(
        self,
        tree: ast.Module,
        aliases: dict[str, str],
        gaps: frozenset[str] = PROPERTY_GAPS,
        *,
        calls: Callable[[], list[ast.Call]] | None = None,
        parent: Callable[[ast.AST], ast.AST | None] | None = None,
        text: str = "",
    ) -> None:
        self.tree = tree
        self.aliases = aliases
        self._calls = calls
        self._parent = parent
        self._text = text
        self.gaps = gaps  # the reads that make a guard (triton-core-count ports the SM count in Triton modules)
        self.definitions = Definitions(tree)
        self._guards: dict[int, str] | None = None
        self._guarded: set[str] = set()  # the probes (qualified names) with a guard use
        self._triton: tuple[set[str], dict[int, tuple[set[str], set[str]]]] | None = None

    def resolve(self, node: ast.expr) -> str | None:
        return resolve_ast(node, self.aliases)

    # --- probes used as guards ----------------------------------------------------------------------------------

    def guard(self, line: int) -> str | None:
        """For a probe called at ``line`` whose result is used as a guard: "" for a capability, the attributes read
        (".major/.minor") for device properties; None when no probe on that line is a guard."""
        if self._guards is None:
            self._guards = self._find_guards()
        return self._guards.get(line)

    def guarded(self, qualified: str) -> bool:
        """Is the probe ``qualified`` used as a guard anywhere in the module?"""
        if self._guards is None:
            self._guards = self._find_guards()
        return qualified in self._guarded

    def _find_guards(self) -> dict[int, str]:
        if self._text and not any(name in self._text for name in PROBE_NAMES):
            return {}  # (no probe is called: most modules)
        parents: Parents
        probes: list[tuple[ast.Call, str]] = []
        if self._calls is not None and self._parent is not None:
            parents = _ParentsOf(self._parent)
            probes = [(c, q) for c in self._calls() if (q := self.resolve(c.func)) in PROBES]
        else:
            by_child: dict[ast.AST, ast.AST] = {}
            parents = by_child
            for node in ast.walk(self.tree):
                for child in ast.iter_child_nodes(node):
                    by_child[child] = node
                if isinstance(node, ast.Call) and (qualified := self.resolve(node.func)) in PROBES:
                    probes.append((node, qualified))
        guards: dict[int, str] = {}
        for call, qualified in probes:
            properties = qualified in PROPERTIES_CALLS
            used = guard_use(call, parents, properties, self.gaps)
            if used is None:
                used = self._stored_guard_use(call, parents, properties)
            if used is not None:
                self._guarded.add(qualified)
                line = call.func.lineno
                guards[line] = "/".join(sorted(set(filter(None, guards.get(line, "").split("/"))) | used))
        return guards

    def _stored_guard_use(self, call: ast.Call, parents: Parents, properties: bool) -> set[str] | None:
        """The guard uses of the variable (or `self.` attribute) the probe's result is stored in."""
        parent = parents.get(call)
        if isinstance(parent, ast.Assign) and parent.value is call:
            targets = parent.targets
        elif isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.value is call:
            targets = [parent.target]
        else:
            return None
        found: set[str] = set()
        uses: Iterator[ast.AST]
        for target in targets:
            if isinstance(target, ast.Name):
                scope = enclosing_node(call, parents, _FUNCTION_NODES)
                uses = (n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == target.id)
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                scope = enclosing_node(call, parents, (ast.ClassDef,))
                uses = (
                    n
                    for n in ast.walk(scope)
                    if isinstance(n, ast.Attribute)
                    and n.attr == target.attr
                    and isinstance(n.value, ast.Name)
                    and n.value.id == "self"
                )
            else:
                continue
            for use in uses:
                if isinstance(getattr(use, "ctx", None), ast.Load):
                    found |= guard_use(use, parents, properties, self.gaps) or set()
        return found or None

    # --- Triton's target names ----------------------------------------------------------------------------------

    def triton_target(self, names: set[str], calls: set[str], line: int) -> bool:
        """Does an expression at ``line`` that reads ``names`` and calls ``calls`` (function or method names) hold
        Triton's target name (`driver.active.get_current_target().backend`: "cuda", "hip", "npu", ...)?"""
        functions, scopes = self._triton_facts()
        if "get_current_target" in calls or calls & functions:
            return True
        visible = [f for f, _ in self.definitions.around(line)]
        for name in names:
            for scope in reversed(visible):
                assigned, targets = scopes.get(id(scope), (set(), set()))
                if name in assigned:
                    if name in targets:
                        return True
                    break
            else:
                if name in scopes[id(self.tree)][1]:
                    return True
        return False

    def _triton_facts(self) -> tuple[set[str], dict[int, tuple[set[str], set[str]]]]:
        """The functions that return Triton's target name, and per scope (module, each function) the names it
        assigns and those of them that hold that name."""
        if self._triton is None:
            scopes: list[ast.AST] = [self.tree, *(f for _, _, f, _ in self.definitions.functions)]
            assigned = {id(s): assignments(s) for s in scopes}
            returns = {id(s): [n.value for n in own_nodes(s) if isinstance(n, ast.Return) and n.value] for s in scopes}
            functions: set[str] = set()
            targets: dict[int, set[str]] = {id(s): set() for s in scopes}
            for _ in range(4):  # (a few rounds reach the fixed point of real code: a helper calling a helper)
                before = (len(functions), sum(map(len, targets.values())))
                module_targets = targets[id(self.tree)]
                for scope in scopes:
                    known = targets[id(scope)] | module_targets
                    for name, value in assigned[id(scope)]:
                        if value is not None and reads_triton_target(value, functions, known):
                            targets[id(scope)].add(name)
                            known.add(name)
                    if isinstance(scope, _FUNCTION_NODES) and any(
                        reads_triton_target(v, functions, known) for v in returns[id(scope)]
                    ):
                        functions.add(scope.name)
                if (len(functions), sum(map(len, targets.values()))) == before:
                    break
            self._triton = (
                functions,
                {id(s): ({n for n, _ in assigned[id(s)]}, targets[id(s)]) for s in scopes},
            )
        return self._triton


def enclosing_node(node: ast.AST, parents: Parents, kinds: tuple[type, ...]) -> ast.AST:
    """The innermost ancestor of one of ``kinds``, else the module."""
    while node in parents:
        node = parents[node]
        if isinstance(node, kinds):
            return node
    return node


def guard_use(
    node: ast.AST, parents: Parents, properties: bool, gaps: frozenset[str] = PROPERTY_GAPS
) -> set[str] | None:
    """How a probe's result (``node``: the call, or a use of the variable holding it) is used as a guard: the
    properties read ({"major"}), or {""} for a capability indexed, compared or unpacked; None for any other use."""
    parent = parents.get(node)
    if properties:
        if isinstance(parent, ast.Attribute) and parent.attr in gaps:
            return {f".{parent.attr}"}
        return None
    if isinstance(parent, ast.Subscript) and parent.value is node or isinstance(parent, ast.Compare):
        return {""}
    if isinstance(parent, ast.Assign) and parent.value is node:
        return {""} if any(isinstance(t, (ast.Tuple, ast.List)) for t in parent.targets) else None
    return None


def assignments(scope: ast.AST) -> list[tuple[str, ast.expr | None]]:
    """(name, value) of the plain assignments of a scope's own body, and its parameters (value None)."""
    found: list[tuple[str, ast.expr | None]] = []
    if isinstance(scope, _FUNCTION_NODES):
        arguments = scope.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        found += [(a.arg, None) for a in every if a is not None]
    for node in own_nodes(scope):
        if isinstance(node, ast.Assign):
            found += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            if isinstance(node.target, ast.Name):
                found.append((node.target.id, node.value))
    return found


def reads_triton_target(value: ast.expr, functions: set[str], names: set[str]) -> bool:
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and node.attr == "get_current_target":
            return True
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if called in functions:
                return True
        if isinstance(node, ast.Name) and node.id in names:
            return True
    return False


# Where a module head carries what was read from it, for every chunk of the file (it lives as long as the head).
