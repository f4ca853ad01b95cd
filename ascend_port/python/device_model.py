"""The devices a module serves, read before any rewrite: which code belongs to CUDA alone and may be ported, which
belongs to another backend or already handles the NPU and must stay as it is, and which CUDA code sits in a
multi-device dispatch that should gain an NPU branch beside it instead of losing its CUDA one.

Real projects support several devices (DeepSpeed's accelerators, diffusers' device-keyed tables, Triton's target
names); a port that renames every ``cuda`` turns their CUDA path into a half-NPU one and edits other vendors' code.
The model is read from Python's ``ast`` of the whole module (and, for a module of a per-backend family such as
``cuda_accelerator.py`` beside ``npu_accelerator.py``, from its siblings' names):

- a **dispatch** is an if/elif chain, a conditional expression, a ``match`` or a dict literal whose tests or keys
  name CUDA and at least one other accelerator (CPU alone is a fallback, not a second device);
- in a dispatch that already names the NPU, everything is **kept**; in one that does not, the other devices'
  branches and the fallback are kept, and the CUDA branches are **forks**: the port adds an NPU branch (or table
  entry) beside them (rules/multidevice.py) and leaves the CUDA one as it was;
- a run of consecutive ``if`` statements over devices (``if xpu: return ...`` / ``if cuda: return ...``) is a chain;
- functions and classes named for another vendor (``_hpu_init``, ``class MPSBackend``) are kept, and so is a
  function that already chooses between CUDA and the NPU;
- a module of another vendor, or the CUDA module of a family that has an NPU member, is kept whole;
- in a project that supports the NPU on its own (:func:`supports_npu`), the rules only report (``reports_only``),
  and what names CUDA on purpose (its CUDA tests, settings, assertions, ``CUDA...`` classes) is kept silent.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

from ascend_port.core.sources import line_offsets, python_lines
from ascend_port.python.device_facts import PROPERTY_GAPS

# Device and process-group names, as tests and keys spell them, by the device they mean.
_DEVICE_WORDS = {
    "cuda": "cuda",
    "nccl": "cuda",
    "nvidia": "cuda",
    "npu": "npu",
    "hccl": "npu",
    "ascend": "npu",
    "cpu": "cpu",
    "gloo": "cpu",
    "mps": "mps",
    "xpu": "xpu",
    "ccl": "xpu",
    "ipex": "xpu",
    "hpu": "hpu",
    "habana": "hpu",
    "mlu": "mlu",
    "cncl": "mlu",
    "musa": "musa",
    "mccl": "musa",
    "sdaa": "sdaa",
    "tccl": "sdaa",
    "xla": "xla",
    "tpu": "xla",
    "ipu": "ipu",
    "gcu": "gcu",
    "dcu": "dcu",
    "rocm": "rocm",
    "hip": "rocm",
    "mtia": "mtia",
    "neuron": "neuron",
    "maia": "maia",
}
OTHER_VENDORS = frozenset(set(_DEVICE_WORDS.values()) - {"cuda", "npu", "cpu"})
ACCELERATORS = OTHER_VENDORS | {"cuda", "npu"}
_TOKEN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")  # MPSBackend -> MPS, Backend; torchNpu -> torch, Npu


_NO_DEVICES: frozenset[str] = frozenset()


@lru_cache(maxsize=65536)
def words(name: str) -> frozenset[str]:
    """The device words of an identifier: ``is_torch_npu_available`` -> {npu}, ``HPU_Accelerator`` -> {hpu},
    ``MPSBackend`` -> {mps}. (Cached: a module repeats its identifiers, and every one of them is asked about.)"""
    found = set()
    for part in re.split(r"[_\W\d]+", name):
        for token in [part, *_TOKEN.findall(part)]:
            device = _DEVICE_WORDS.get(token.lower())
            if device:
                found.add(device)
    return frozenset(found) if found else _NO_DEVICES


_STRING_HEADS = frozenset(("cuda", "npu", "cpu", *OTHER_VENDORS, "nccl", "hccl", "gloo"))


def _string_device(value: str) -> str | None:
    if len(value) > 64:
        return None  # (a docstring, a message: not a device or backend name; most of a module's strings)
    head = value.strip().lower().split(":", 1)[0]
    return _DEVICE_WORDS.get(head) if head in _STRING_HEADS else None


def devices_in(node: ast.AST) -> set[str]:
    """The devices an expression names: strings (``"cuda:0"``, ``"hccl"``), dotted names (``torch.backends.mps``,
    ``torch_npu``), identifiers (``is_npu_available``, ``IS_HPU``) and attributes (``x.is_cuda``)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        found |= _node_devices(sub)
    return found


def _node_devices(sub: ast.AST) -> frozenset[str]:
    """The devices one node names itself (its children aside)."""
    kind = type(sub)
    if kind is ast.Name:
        return words(sub.id)  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return words(sub.attr)  # type: ignore[attr-defined]
    if kind is ast.Constant and isinstance(value := sub.value, str):  # type: ignore[attr-defined]
        device = _string_device(value)
        return frozenset((device,)) if device else _NO_DEVICES
    if kind is ast.Import or kind is ast.ImportFrom:  # `import torch_npu` inside the function
        return frozenset(d for alias in sub.names for d in words(alias.name))  # type: ignore[attr-defined]
    return _NO_DEVICES


class SubtreeDevices:
    """``devices_in`` of every node of one module, computed in one pass from the leaves up, so that the model (and the
    rules after it) ask about any statement or expression of the module without walking it again: asking per node
    with ``devices_in`` made reading a module cost its nodes times its depth. Also which subtrees call a capability
    probe (``get_device_capability``), the rare functions whose guards :func:`_devices_beside_guards` must read."""

    def __init__(self, order: list[ast.AST], parents: list[int]) -> None:
        """``order``: the module's nodes, each after its parent (breadth first, as walk_with_parents gives them);
        ``parents``: the index in ``order`` of each one's parent (-1 for the root)."""
        below: list[set[str] | None] = [None] * len(order)
        probes: list[bool] = [False] * len(order)
        self._of: dict[int, frozenset[str]] = {}
        self._probes: set[int] = set()
        call = ast.Call
        for k in range(len(order) - 1, -1, -1):  # children before their parents
            node = order[k]
            own = _node_devices(node)
            found = frozenset(below[k] | own) if below[k] else own  # type: ignore[operator]
            self._of[id(node)] = found
            probe = probes[k] or (type(node) is call and _is_probe(node))
            if probe:
                self._probes.add(id(node))
            parent = parents[k]
            if parent >= 0:
                if found:
                    if below[parent] is None:
                        below[parent] = set(found)
                    else:
                        below[parent] |= found  # type: ignore[operator]
                if probe:
                    probes[parent] = True

    @classmethod
    def of(cls, tree: ast.AST) -> SubtreeDevices:
        return cls(*walk_with_parents(tree))

    def __call__(self, node: ast.AST) -> frozenset[str]:
        """``devices_in(node)``; a node from outside the module (a wrapper built to ask about a block) is read."""
        found = self._of.get(id(node))
        if found is not None:
            return found
        return frozenset(_node_devices(node).union(*(self(child) for child in ast.iter_child_nodes(node))))

    def probes(self, node: ast.AST) -> bool:
        """Does ``node``'s subtree call ``get_device_capability``/``get_device_properties``?"""
        return id(node) in self._probes if id(node) in self._of else any(map(_is_probe, ast.walk(node)))


def walk_with_parents(tree: ast.AST) -> tuple[list[ast.AST], list[int]]:
    """``tree``'s nodes in ``ast.walk``'s (breadth-first) order, and the index of each one's parent (-1: the root)."""
    order: list[ast.AST] = [tree]
    parents: list[int] = [-1]
    node_type = ast.AST
    i = 0
    while i < len(order):  # (ast.iter_child_nodes inlined: this walk is most of the cost of reading a module)
        node = order[i]
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                order.append(value)
                parents.append(i)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        order.append(item)
                        parents.append(i)
        i += 1
    return order, parents


def _is_probe(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PROBES


@dataclass(frozen=True)
class Span:
    first: int
    last: int


@dataclass
class DeviceModel:
    """What the port may touch in one module (1-based lines)."""

    kept_module: str | None = None  # why the whole module stays as it is, else None
    # The project supports the NPU on its own (supports_npu): a rewrite in place would take a working path from its
    # other devices, so the rules report what they would change and change nothing (NPU120's additions aside).
    reports_only: bool = False
    kept: list[Span] = field(default_factory=list)  # code of other devices, or of dispatches that handle the NPU
    forks: list[Span] = field(default_factory=list)  # CUDA branches that gain an NPU branch beside them
    # the final blocks among them (`if xpu: ... else: <cuda>`), whose NPU branch goes before them
    fallbacks: list[Span] = field(default_factory=list)
    todo: dict[int, str] = field(default_factory=dict)  # first line of a dispatch left without an NPU branch -> why
    # Names bound once to `torch.cuda.is_available()` whose every use is the test of a fork (`if HAS_CUDA:` in a
    # chain over devices): their binding stays CUDA's, and the NPU branch beside each fork asks the NPU instead.
    cuda_predicates: set[str] = field(default_factory=set)
    # The lines of the `def`s of tests whose subject is a CUDA-only kernel (rules/kernels/kernel_tests.py): kept
    # whole, their CUDA code with them, and skipped on an NPU host.
    kernel_tests: set[int] = field(default_factory=set)
    _starts: list[int] = field(default_factory=list, repr=False)

    def finish(self) -> DeviceModel:
        self.kept.sort(key=lambda s: (s.first, -s.last))
        merged: list[Span] = []
        for span in self.kept:
            if merged and span.first <= merged[-1].last:
                if span.last > merged[-1].last:
                    merged[-1] = Span(merged[-1].first, span.last)
                continue
            merged.append(span)
        self.kept = merged
        self._starts = [s.first for s in merged]
        return self

    def keeps_nothing(self) -> bool:
        """May the port touch every line (most modules: a caller need not compute a node's line to ask)?"""
        return self.kept_module is None and not self.kept

    def keeps(self, line: int) -> bool:
        """Must the code on ``line`` stay as it is?"""
        if self.kept_module is not None:
            return True
        i = bisect.bisect_right(self._starts, line) - 1
        return i >= 0 and self.kept[i].last >= line

    def fork_at(self, line: int) -> Span | None:
        """The CUDA branch (an `if`/`elif`) that starts on ``line``."""
        return next((span for span in self.forks if span.first == line and span not in self.fallbacks), None)

    def fallback_at(self, line: int) -> Span | None:
        """The CUDA final block whose first statement starts on ``line``."""
        return next((span for span in self.fallbacks if span.first == line), None)


def _span(node: ast.AST) -> Span:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])  # type: ignore[attr-defined]
    return Span(first, node.end_lineno or node.lineno)  # type: ignore[attr-defined]


def _chain(node: ast.If) -> tuple[list[ast.If], list[ast.stmt]]:
    """The branches of an if/elif chain and its final else block."""
    branches = [node]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and _is_elif(node.orelse[0], node):
        node = node.orelse[0]
        branches.append(node)
    return branches, node.orelse


def _is_elif(inner: ast.If, outer: ast.If) -> bool:
    # `else:` + a nested `if` is indented deeper; an `elif` starts at the outer `if`'s column.
    return inner.col_offset == outer.col_offset


def _block_span(block: list[ast.stmt], header_line: int | None = None) -> Span:
    first = header_line if header_line is not None else _span(block[0]).first
    return Span(first, max(_span(s).last for s in block))


def _names_cuda(test: ast.AST) -> bool:
    """Does a test ask whether something *is* CUDA (a device or backend name compared, ``x.is_cuda``)?"""
    for sub in ast.walk(test):
        if isinstance(sub, ast.Compare) and "cuda" in devices_in(sub) and not isinstance(sub.left, ast.Call):
            return True
        if isinstance(sub, ast.Compare) and any(isinstance(c, ast.Constant) for c in sub.comparators):
            if "cuda" in set().union(*(devices_in(c) for c in sub.comparators)):
                return True
        if isinstance(sub, ast.Attribute) and sub.attr == "is_cuda":
            return True
    return False


_QUESTION = re.compile(r"^_*(?:is|has|check|require|requires|supports?|can|get\w*capabilit)(?:_|$)", re.IGNORECASE)


def _asks_about_cuda(name: str) -> bool:
    """``is_cuda_available``, ``_check_device_cuda``, ``get_torch_cuda_device_capability``: a question whose answer
    is about CUDA (not ``_create_cuda_graph``, which is work a port may move)."""
    return "cuda" in words(name) and bool(_QUESTION.match(name))


_PROBES = {"get_device_capability", "get_device_properties"}


def _devices_beside_guards(function: ast.AST, devices: SubtreeDevices) -> frozenset[str] | set[str]:
    """The devices a function names outside its capability guards: the port keeps a guard on torch.cuda beside
    the code it moves to the NPU (rules/device.py), and such a port is not a function that handles both devices."""
    if not devices.probes(function):
        return devices(function)  # (no guard: most functions)
    guards: set[int] = set()
    for sub in ast.walk(function):
        expression = (
            sub.test
            if isinstance(sub, (ast.If, ast.While, ast.Assert, ast.IfExp))
            else sub.value
            if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.Return)) and sub.value is not None
            else None
        )
        if expression is not None and any(map(_is_probe, ast.walk(expression))):
            guards.update(id(n) for n in ast.walk(expression))
    found: set[str] = set()
    for sub in ast.walk(function):
        if id(sub) not in guards and not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found |= _node_devices(sub)
    return found


def runs_nvidia_smi(function: ast.AST) -> bool:
    """Does the function run NVIDIA's `nvidia-smi` itself (a call whose command, a string or a list's first item,
    starts with it: `subprocess.check_output(["nvidia-smi", "-L"])`, `os.popen("nvidia-smi topo -m")`)?"""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and node.args:
            command = node.args[0]
            if isinstance(command, (ast.List, ast.Tuple)) and command.elts:
                command = command.elts[0]
            if isinstance(command, ast.Constant) and isinstance(command.value, str):
                if command.value.startswith(NVIDIA_SMI):
                    return True
    return False


NVIDIA_SMI = "nvidia-smi"
# What of torch.cuda describes the NVIDIA GPUs (as nvidia-smi does) without putting work on them.
_DESCRIBES = frozenset(
    ("device_count", "is_available", "get_device_name", "get_device_properties", "get_device_capability")
)


def _only_describes_cuda(function: ast.AST) -> bool:
    """Does the function use CUDA only to describe the NVIDIA GPUs (`torch.cuda.device_count()`, a variable like
    `CUDA_VISIBLE_DEVICES`), no `.cuda()`, `"cuda"` device or other `torch.cuda` call (a `main()` that logs
    `nvidia-smi` and trains on CUDA is ported as any code)?"""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Attribute):
            if node.attr in _DESCRIBES and isinstance(node.value, ast.Attribute) and node.value.attr == "cuda":
                continue
            if node.attr in ("cuda", "is_cuda"):
                return False
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _string_device(node.value) == "cuda":
            return False
        stack.extend(ast.iter_child_nodes(node))
    return True


def nvidia_smi_counts(module: ast.Module) -> frozenset[str]:
    """The module's functions (at its top) that count the NVIDIA GPUs by running nvidia-smi: each runs it itself and
    returns only ``len(...)`` or an integer (LitServe's ``check_cuda_with_nvidia_smi``, 0 where it fails). A CUDA
    availability/count probe of the project's own, whose NPU counterpart is ``torch.npu.device_count()``."""
    found = set()
    for node in module.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not runs_nvidia_smi(node):
            continue
        returned = [n.value for n in ast.walk(node) if isinstance(n, ast.Return)]
        if returned and all(_is_count(value) for value in returned):
            found.add(node.name)
    return frozenset(found)


def _is_count(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Constant):
        return type(value.value) is int
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len"


def _is_question(node: ast.AST | None) -> bool:
    """``torch.cuda.is_available()``, ``x == "cuda"``, ``get_device_capability() >= (8, 0)``: a yes/no answer."""
    if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return bool(_QUESTION.match(name))
    return False


def _device_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and _string_device(node.value) == "cuda"


class _Reader(ast.NodeVisitor):
    def __init__(self, model: DeviceModel, npu_aware: bool = False, hot: list[int] | None = None) -> None:
        """``hot``: the lines (ascending) of what may be kept or forked (_find_keeping_offsets), when known."""
        self.model = model
        self.devices = SubtreeDevices([], [])  # (each statement's, in visit_Module; this one reads what it is asked)
        self.npu_aware = npu_aware
        self.hot = hot
        self.elifs: set[int] = set()
        self.siblings: dict[int, set[str]] = {}  # an `if` statement -> the devices its block's `if`s test
        # the names that dispatches test (`if HAS_CUDA:`), each with its fork's span (None: a dispatch that handles
        # the NPU already, kept whole: what a port of it adds tests its names again)
        self.named_tests: list[tuple[str, Span | None]] = []
        self.allowed: dict[str, frozenset[str]] = {}  # a value -> the devices an allow-list lets it be (_allow_lists)
        self.may_run_nvidia_smi = True  # (False where the module's text never says nvidia-smi: no function walked)

    def visit_Module(self, node: ast.Module) -> None:
        """Each top-level statement on its own, with the devices of its nodes (SubtreeDevices). One that holds no
        hot line (most of a module's statements) is not read: what it would keep or fork names another device, or
        CUDA as a dict key. An `if` of a run is read all the same: its neighbours' tests decide."""
        runs = _if_runs(node.body)
        for run in runs:
            named = block_devices(run)
            self.siblings.update({id(s): named for s in run})
        in_runs = {id(s) for run in runs for s in run}
        for statement in node.body:
            if self.hot is not None and id(statement) not in in_runs:
                span = _span(statement)
                i = bisect.bisect_left(self.hot, span.first)
                if i == len(self.hot) or self.hot[i] > span.last:
                    continue
            self.devices = SubtreeDevices.of(statement)
            self.visit(statement)

    def keep(self, node: ast.AST) -> None:
        self.model.kept.append(_span(node))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        if words(node.name) & OTHER_VENDORS:
            self.keep(node)
            return
        if self.npu_aware and isinstance(node, ast.ClassDef) and "cuda" in words(node.name):
            self.keep(node)  # `class CUDAOpBuilder` in a project that has its NPU counterpart
            return
        if (
            self.may_run_nvidia_smi
            and not isinstance(node, ast.ClassDef)
            and runs_nvidia_smi(node)
            and _only_describes_cuda(node)
        ):
            # It describes the NVIDIA GPUs (LitServe's check_cuda_with_nvidia_smi counts those `nvidia-smi -L` lists,
            # filtered by CUDA_VISIBLE_DEVICES): its CUDA names are NVIDIA's, with no NPU form.
            self.keep(node)
            return
        if not isinstance(node, ast.ClassDef) and (
            {"cuda", "npu"} <= _devices_beside_guards(node, self.devices)
            or (self.npu_aware and _asks_about_cuda(node.name))
        ):
            # A function that already picks between CUDA and the NPU (DeepSpeed's accelerator detection: a run of
            # `if name is None: try: import torch_npu; name = "npu"` blocks) is multi-device code that works; in a
            # project that supports the NPU, a function named for CUDA (`is_cuda_available`) is CUDA's.
            self.keep(node)
            self.named_tests.extend((name, None) for n in ast.walk(node) if (name := _tested_name(n)) is not None)
            return
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        # `NCCL_BACKEND = "nccl"`, `cuda_available = torch.cuda.is_available()`: in a project that supports the
        # NPU, a setting that names CUDA is CUDA's.
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        named_for_cuda = any("cuda" in self.devices(t) for t in targets) and _is_question(node.value)
        if self.npu_aware and node.value is not None and (_device_constant(node.value) or named_for_cuda):
            self.keep(node)
            return
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg == "device_types" and "cuda" in self.devices(node.value):
            self.keep(node.value)  # `custom_op(..., device_types="cuda")`: a kernel registered for CUDA is CUDA code
            return
        self.generic_visit(node)

    visit_AnnAssign = visit_Assign  # type: ignore[assignment]

    def visit_List(self, node: ast.List | ast.Tuple | ast.Set) -> None:
        named = {_string_device(e.value) for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if "cuda" in named and named & (ACCELERATORS - {"cuda"}):  # ("cuda", "xpu"): the devices a feature has
            self.keep(node)
            return
        self.generic_visit(node)

    visit_Tuple = visit_List  # type: ignore[assignment]
    visit_Set = visit_List  # type: ignore[assignment]

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        if id(node) not in self.elifs:
            branches, final = _chain(node)
            self.elifs.update(id(b) for b in branches[1:])
            self._dispatch(node, branches, final)
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for block in _blocks(node):  # the devices each run of `if` statements tests, for each of them
            for run in _if_runs(block):
                named = block_devices(run, self.devices)
                self.siblings.update({id(s): named for s in run})
        for child in ast.iter_child_nodes(node):
            # Every expression the model keeps or forks names CUDA: one that does not is not read (most of a
            # module's nodes). Statements are, for the names of their functions and classes.
            if isinstance(child, ast.expr) and "cuda" not in self.devices(child):
                continue
            self.visit(child)

    def _dispatch(self, node: ast.If, branches: list[ast.If], final: list[ast.stmt]) -> None:
        tests = [self.devices(b.test) for b in branches]
        # `if xpu: return "xpu"` / `if cuda: return "cuda"` / `if mps: ...`: the statements of one block dispatch too
        named = set().union(*tests) | self.siblings.get(id(node), set()) | self._values_of_tested(branches)
        if self.npu_aware and "npu" not in named and "cuda" in named:
            self.keep(node)  # a project that supports the NPU asks "is this CUDA?" on purpose
            return
        named = _with_cuda_fallback(named, branches, final, self.devices)
        if "cuda" not in named or not named & (ACCELERATORS - {"cuda"}):
            for branch, devices in zip(branches, tests):  # a test of another vendor alone: its branch is theirs
                if devices and devices <= OTHER_VENDORS:
                    self.keep(branch)
            return
        if "npu" in named:
            self.keep(node)
            self.named_tests.extend((name, None) for b in branches if (name := _tested_name(b)) is not None)
            return
        for i, (branch, devices) in enumerate(zip(branches, tests)):
            end = _span(branch.orelse[0]).first - 1 if i + 1 < len(branches) else _block_span(branch.body).last
            span = Span(branch.lineno, end)
            if "cuda" in devices and not devices & OTHER_VENDORS:
                self.model.forks.append(span)
                if (name := _tested_name(branch)) is not None:
                    self.named_tests.append((name, span))
            else:
                self._keep_branch(span, branch.body)
        if final and _cuda_fallback(final, tests, self.devices):
            # `if xpu: ... else: <cuda>`: the final block is CUDA's branch, a fork (from its first statement)
            self.model.forks.append(_block_span(final))
            self.model.fallbacks.append(_block_span(final))
        elif final:
            self._keep_branch(_block_span(final, _span(final[0]).first - 1), final)

    def _values_of_tested(self, branches: list[ast.If]) -> set[str]:
        """The devices the module lets a value hold that these tests compare with "cuda": `self._accelerator ==
        "cuda"` where `self._accelerator in ("cuda", "mps")` is checked elsewhere (LitServe's connector) is a
        choice between devices, as a chain over them is."""
        named: set[str] = set()
        for branch in branches if self.allowed else ():
            for sub in ast.walk(branch.test):
                # (`== "cuda"` alone: the body of `!= "cuda"` is the other devices' path)
                if isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.Eq) and "cuda" in devices_in(sub):
                    named.update(*(self.allowed.get(ast.unparse(side), ()) for side in (sub.left, *sub.comparators)))
        return named

    def _keep_branch(self, span: Span, body: list[ast.stmt]) -> None:
        """Keep a branch of other devices (or of CUDA and others, `if x.device.type in ["cuda", "xpu"]:`), but the
        dispatches in it, which are read as their own (`if is_xpu_available(): ... else: <cuda>`)."""
        holding = [
            s
            for s in body
            if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try))  # (a statement that holds a block)
            and "cuda" in self.devices(s)
            and any(isinstance(n, ast.If) and is_dispatch(n) for n in ast.walk(s))
        ]
        if not holding:
            self.model.kept.append(span)
            return
        self.model.kept.append(Span(span.first, _span(body[0]).first - 1))  # (its test)
        self.model.kept.extend(_span(s) for s in body if not any(s is h for h in holding))

    def visit_Assert(self, node: ast.Assert) -> None:
        if self.npu_aware and "cuda" in self.devices(node.test) and "npu" not in self.devices(node.test):
            self.keep(node)  # `assert get_accelerator().device_name() == "cuda", "GDS needs CUDA"`
            return
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        named = self.devices(node)
        if "cuda" in named and named & OTHER_VENDORS and "npu" not in named:
            self.keep(node)  # `torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1`: several devices
            return
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        named = self.devices(node)
        if self.npu_aware and "npu" not in named and _names_cuda(node.test):
            self.keep(node)
            return
        if "cuda" in named and named & (ACCELERATORS - {"cuda"}):
            self.keep(node)
            if "npu" not in named:
                self.model.todo.setdefault(node.lineno, "a conditional expression over devices")
            return
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        keys = {_string_device(k.value) for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        keys.discard(None)
        if "cuda" in keys and len(keys) >= 2:
            if "npu" in keys or self.npu_aware:
                self.keep(node)
            else:
                self.model.forks.append(_span(node))
            return
        self.generic_visit(node)

    def visit_Match(self, node: ast.Match) -> None:
        named = set().union(*(self.devices(case.pattern) for case in node.cases))
        if "cuda" in named and named & (ACCELERATORS - {"cuda"}):
            self.keep(node)
            if "npu" not in named:
                self.model.todo.setdefault(node.lineno, "a match over devices")
            return
        self.generic_visit(node)


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    return [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _if_runs(block: list[ast.stmt]) -> list[list[ast.stmt]]:
    """The runs of consecutive `if` statements of a block (`if xpu: return` / `if cuda: return` / `if mps: ...`).
    A `try` that only imports and tests goes on with the run (LitServe: `if nvidia_smi() > 0: return "cuda"` /
    `try: import torch; if torch.backends.mps.is_available(): return "mps"`)."""
    runs: list[list[ast.stmt]] = [[]]
    for statement in block:
        if isinstance(statement, ast.If):
            runs[-1].append(statement)
        elif runs[-1] and _imports_and_tests(statement):
            assert isinstance(statement, ast.Try)
            runs[-1].extend(s for s in statement.body if isinstance(s, ast.If))
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if len(run) > 1]


def _imports_and_tests(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Try)
        and any(isinstance(s, ast.If) for s in statement.body)
        and all(isinstance(s, (ast.If, ast.Import, ast.ImportFrom)) for s in statement.body)
    )


def block_devices(block: list[ast.stmt], devices: Callable[[ast.AST], AbstractSet[str]] = devices_in) -> set[str]:
    """The devices the if/elif chains of one block test (their heads: the statements of the block)."""
    named: set[str] = set()
    for statement in block:
        if isinstance(statement, ast.If):
            branches, _ = _chain(statement)
            for branch in branches:
                named |= devices(branch.test)
    return named


def _with_cuda_fallback(named: set[str], branches: list[ast.If], final: list[ast.stmt], devices) -> set[str]:
    """The devices a chain tests, with CUDA where one test of another vendor's leaves CUDA its final block (`if
    hpu: ... else: <cuda>`)."""
    if final and len(branches) == 1 and named & OTHER_VENDORS:
        return named | (devices(ast.Module(body=final, type_ignores=[])) & {"cuda"})
    return named


def _cuda_fallback(final: list[ast.stmt], tests: Sequence[AbstractSet[str]], devices) -> bool:
    """Is the final `else` block of a chain over other devices CUDA's (it names CUDA and no other accelerator, and
    no test of the chain names CUDA)?"""
    named = devices(ast.Module(body=final, type_ignores=[]))
    return "cuda" in named and not named & (ACCELERATORS - {"cuda"}) and not any("cuda" in t for t in tests)


def is_dispatch(node: ast.If, parent: ast.AST | None = None) -> bool:
    """Is ``node`` the head of an if/elif chain over CUDA and another accelerator, without an NPU branch (its own
    tests, or with ``parent`` those of the other `if` statements of its block too; `if hpu: ... else: <cuda>`
    too)?"""
    branches, final = _chain(node)
    named = _with_cuda_fallback(set().union(*(devices_in(b.test) for b in branches)), branches, final, devices_in)
    if parent is not None:
        for block in _blocks(parent):
            named |= set().union(*(block_devices(run) for run in _if_runs(block) if any(s is node for s in run)))
    return "cuda" in named and "npu" not in named and bool(named & OTHER_VENDORS)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A string that a dict could have as a key: `{"cuda": ..., "cpu": ...}` is a dispatch (a fork) even without another
# accelerator.
_CUDA_KEY = re.compile(r"""["'][ \t]*cuda[^"'\n]*["'][ \t]*:""", re.IGNORECASE)


@lru_cache(maxsize=8)  # (the trigger filter asks, MultiDeviceTransformer's `when`, then the port of the same text)
def may_keep_anything(text: str) -> bool:
    """Can the model of a module with this source keep or fork anything, outside a project that supports the NPU?
    Everything it keeps or forks names a device besides CUDA (another vendor's, the NPU, CPU as a key beside CUDA's
    in a dict) or registers a kernel for CUDA (``device_types``); every device the model can see is a word of one of
    the text's identifiers (strings included), so a module whose words name no other device has an empty model,
    known without reading its ``ast`` (most modules)."""
    return next(_find_keeping_offsets(text), None) is not None  # (the first will do)


def _find_keeping_offsets(text: str) -> Iterator[int]:
    """The offsets in ``text`` of what the model may keep or fork for (may_keep_anything): each ``device_types``,
    each string key that names CUDA, each identifier that names another device (0 alone when the text cannot be
    searched by offsets). A statement whose lines hold none keeps and forks nothing (_Reader.visit_Module)."""
    at = text.find("device_types")
    while at >= 0:
        yield at
        at = text.find("device_types", at + 1)
    for match in _CUDA_KEY.finditer(text):
        yield match.start()
    at = text.find(NVIDIA_SMI)
    while at >= 0:  # (a function that runs it stays CUDA's: _Reader.visit_FunctionDef)
        yield at
        at = text.find(NVIDIA_SMI, at + 1)
    if "get_device_properties" in text and (at := text.find("device_count")) >= 0:
        yield at  # (a count that bounds a loop over CUDA probes: _keep_counts_of_cuda_probes)
    lowered = text.lower()
    if len(lowered) != len(text):  # (lower() lengthened a character: offsets differ)
        if any(words(identifier) & _OTHER_ACCELERATORS for identifier in set(_IDENTIFIER.findall(text))):
            yield 0
        return
    # Only an identifier that holds a device word (case aside) can name a device: those around each occurrence,
    # less the occurrences where no word can start (`npu` in `input`: a lower-case letter after a letter).
    for key in _OTHER_KEYS:
        at = lowered.find(key)
        while at >= 0:
            if not (at and text[at].islower() and text[at - 1] in _LETTERS):
                start, end = at, at + len(key)
                while start and text[start - 1] in _IDENTIFIER_CHARS:
                    start -= 1
                while end < len(text) and text[end] in _IDENTIFIER_CHARS:
                    end += 1
                if words(text[start:end].lstrip(_DIGITS)) & _OTHER_ACCELERATORS:
                    yield at
            at = lowered.find(key, at + 1)


_OTHER_ACCELERATORS = ACCELERATORS - {"cuda"}
_OTHER_KEYS = tuple(key for key, device in _DEVICE_WORDS.items() if device in _OTHER_ACCELERATORS)
_LETTERS = frozenset(string.ascii_letters)
_DIGITS = string.digits
_IDENTIFIER_CHARS = frozenset(string.ascii_letters + string.digits + "_")


def read(
    module: ast.Module,
    family: str | None = None,
    npu_aware: bool = False,
    text: str | None = None,
    line_starts: Sequence[int] | None = None,
    shared: AbstractSet[str] = frozenset(),
) -> DeviceModel:
    """The device model of ``module``; ``family``: what :func:`module_family` said of its file; ``npu_aware``: the
    project supports the NPU already (:func:`supports_npu`); ``text``: the module's source, when the caller has it
    (then the top-level statements that name no other device are not read: see _Reader.visit_Module), and
    ``line_starts`` the offsets its lines start at (core/sources.line_offsets), when the caller has them;
    ``shared``: the names bound to `torch.cuda.is_available()` in one module of the project that another imports
    (PortOptions.shared_cuda_predicates)."""
    model = DeviceModel(kept_module=family_reason(family), reports_only=npu_aware)
    if model.kept_module is None:
        hot = None
        if text is not None and not npu_aware:
            starts = line_starts if line_starts is not None else line_offsets(python_lines(text))
            hot = sorted({bisect.bisect_right(starts, offset) for offset in _find_keeping_offsets(text)})
        reader = _Reader(model, npu_aware, hot)
        reader.may_run_nvidia_smi = text is None or NVIDIA_SMI in text
        if text is None or _ALLOW_LIST.search(text):
            reader.allowed = _allow_lists(module)
        reader.visit(module)
        if reader.named_tests and (
            text is None
            or _may_bind_cuda_predicates(text, reader.named_tests)
            or any(name in shared for name, _ in reader.named_tests)
        ):
            _route_cuda_predicates(module, model, reader.named_tests, shared)
        if text is None or ("get_device_properties" in text and "device_count" in text):
            _keep_counts_of_cuda_probes(module, model)
    return model.finish()


# `in ("cpu", "cuda", "mps")`: a membership test in a literal list of devices with CUDA in it (the prefilter of
# _allow_lists: most modules have none).
_ALLOW_LIST = re.compile(r"""\bin\s*[\[({][^\])}]*["']cuda["']""")


def _allow_lists(module: ast.Module) -> dict[str, frozenset[str]]:
    """The values the module checks against a literal list of devices naming CUDA and another accelerator
    (`if self._accelerator in ("cuda", "mps"):`), each with the devices of its lists (by the value's code)."""
    allowed: dict[str, frozenset[str]] = {}
    for node in ast.walk(module):
        if not isinstance(node, ast.Compare) or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            continue
        listed = node.comparators[0]
        if not isinstance(listed, (ast.List, ast.Tuple, ast.Set)):
            continue
        named = {
            _string_device(e.value) for e in listed.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        }
        if "cuda" in named and named & _OTHER_ACCELERATORS:
            key = ast.unparse(node.left)
            allowed[key] = allowed.get(key, frozenset()) | {d for d in named if d is not None}
    return allowed


def _keep_counts_of_cuda_probes(module: ast.Module, model: DeviceModel) -> None:
    """`for gpu in range(torch.cuda.device_count()): props = torch.cuda.get_device_properties(gpu)` then
    `props.major`: the probe stays CUDA's (the NPU's properties have no .major/.minor/.multi_processor_count: NPU108
    keeps the call), so the count that bounds its loop stays CUDA's too (the call in `range()`, or the statement that
    binds the name it reads): ported alone, the loop would run on an NPU host and the probe raise."""
    counts: dict[str, ast.Assign] = {}  # (by name, in the whole module: a count bound in one function is rare)
    loops: list[ast.For] = []
    for node in ast.walk(module):  # (only for a module that names both: see read)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _calls_cuda(node.value, "device_count")
        ):
            counts[node.targets[0].id] = node
        elif isinstance(node, ast.For):
            loops.append(node)
    # (a loop statement: a comprehension on one line would keep the probe's line, and with it NPU108's TODO)
    for loop in loops:
        if not (
            isinstance(loop.target, ast.Name)
            and isinstance(loop.iter, ast.Call)
            and isinstance(loop.iter.func, ast.Name)
            and loop.iter.func.id == "range"
            and len(loop.iter.args) == 1
            and _reads_gap_properties(loop, loop.target.id)
        ):
            continue
        bound = loop.iter.args[0]
        if _calls_cuda(bound, "device_count"):
            model.kept.append(Span(bound.lineno, bound.end_lineno or bound.lineno))
        elif isinstance(bound, ast.Name) and bound.id in counts:
            model.kept.append(_span(counts[bound.id]))


def _calls_cuda(node: ast.expr, name: str) -> bool:
    """``<torch>.cuda.<name>()``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "cuda"
    )


def _reads_gap_properties(loop: ast.For, index: str) -> bool:
    """Does the loop read .major/.minor/.multi_processor_count of `torch.cuda.get_device_properties(<index>)`
    (directly, or through the name it binds)?"""
    probes = [
        n
        for n in ast.walk(loop)
        if isinstance(n, ast.Call)
        and _calls_cuda(n, "get_device_properties")
        and any(isinstance(a, ast.Name) and a.id == index for a in n.args)
    ]
    if not probes:
        return False
    names = {
        n.targets[0].id
        for n in ast.walk(loop)
        if isinstance(n, ast.Assign) and n.value in probes and isinstance(n.targets[0], ast.Name)
    }
    return any(
        isinstance(n, ast.Attribute)
        and n.attr in PROPERTY_GAPS
        and (n.value in probes or (isinstance(n.value, ast.Name) and n.value.id in names))
        for n in ast.walk(loop)
    )


_PREDICATE_BINDING = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*[\w.]*\bcuda\.is_available\(\)", re.MULTILINE)


def _may_bind_cuda_predicates(text: str, named_tests: list[tuple[str, Span | None]]) -> bool:
    """Does the source bind a tested name to `torch.cuda.is_available()` (a search of the text: most modules whose
    dispatches test a name do not, and are not walked for it)?"""
    if "is_available()" not in text:
        return False
    return bool({name for name, _ in named_tests} & set(_PREDICATE_BINDING.findall(text)))


def _route_cuda_predicates(
    module: ast.Module,
    model: DeviceModel,
    named_tests: list[tuple[str, Span | None]],
    shared: AbstractSet[str] = frozenset(),
) -> None:
    """Forks that test a name bound to ``torch.cuda.is_available()`` (``HAS_CUDA = ...``; ``if HAS_CUDA:``): the
    name keeps its meaning on both sides of the port. Where the forks are its only uses, its binding stays CUDA's
    and each fork gains an NPU branch that asks the NPU (cuda_predicates); where other code uses it too (or binds
    it again), which the port moves to the NPU with its binding, its forks move with them (the name then asks
    about the NPU). So too where another module of the project imports the name (``shared``), whose users the port
    moves with it: in the module that binds it and in those that import it, its forks move with the binding."""
    stores: dict[str, int] = {}
    loads: dict[str, int] = {}
    predicates: dict[str, ast.Assign] = {}  # `HAS_CUDA = torch.cuda.is_available()`
    for node in ast.walk(module):
        if isinstance(node, ast.Name):
            counts = loads if isinstance(node.ctx, ast.Load) else stores
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _asks_cuda_availability(node.value):
                predicates[node.targets[0].id] = node
    tests_by_name: dict[str, list[Span | None]] = {}
    for name, span in named_tests:
        tests_by_name.setdefault(name, []).append(span)
    for name, spans in tests_by_name.items():
        if name in shared and (name in predicates or not stores.get(name)):
            # (bound here and imported elsewhere, or imported here: not a local of the same name)
            model.forks[:] = [f for f in model.forks if f not in spans]
            continue
        if name not in predicates:
            continue  # (`use_cuda` from the command line: a fork like any other)
        if stores.get(name) == 1 and loads.get(name, 0) == len(spans):
            model.cuda_predicates.add(name)
            model.kept.append(_span(predicates[name]))
        else:
            model.forks[:] = [f for f in model.forks if f not in spans]


def _tested_name(node: ast.AST) -> str | None:
    """``HAS_CUDA`` of ``if HAS_CUDA:``."""
    return node.test.id if isinstance(node, ast.If) and isinstance(node.test, ast.Name) else None


def _asks_cuda_availability(value: ast.expr) -> bool:
    """``torch.cuda.is_available()`` (under any name for torch)."""
    return _calls_cuda(value, "is_available") and isinstance(value, ast.Call) and not value.args


# --- families of per-backend modules --------------------------------------------------------------------------------


def module_family(path: str) -> str:
    """What a file's place says of the devices it serves: ``"<device> <member,member,...>"`` when it is one member
    of a per-backend family (``cuda_accelerator.py`` beside ``npu_accelerator.py``; ``comm/nccl.py`` beside
    ``comm/hccl.py``), ``"<device> folder"`` in a folder named for another vendor (``.../hpu/...``), else ``""``."""
    folder, name = os.path.split(os.path.abspath(path))
    stem = name.rsplit(".", 1)[0]
    parts = folder.split(os.sep)[-5:]
    for i in range(len(parts) - 1, 0, -1):
        part = parts[i]
        device = _DEVICE_WORDS.get(part.lower())
        if device is not None and device != "cuda" and part.lower() == device:  # `hpu/`, `npu/`, `cpu/`
            return f"{device} folder"
        # An NPU member of a project's backend folders (fla's `backends/triton_ascend/`): the project's own NPU port
        # (NPU500 must not ask to port those Triton kernels again). Only under `backends/`: a folder of the user's
        # named `npu_port/` holds CUDA code to port.
        words = {_DEVICE_WORDS.get(word) for word in re.split(r"[_\-]", part.lower())} - {None}
        if words == {"npu"} and parts[i - 1].lower() in ("backends", "backend"):
            return "npu folder"
    pattern = _family_pattern(stem)
    if pattern is None:
        return ""
    device, regex = pattern
    members = set(_siblings(folder, regex)) - {None}
    if "cuda" in members and members & (ACCELERATORS - {"cuda"}):
        return f"{device} {','.join(sorted(members))}"  # type: ignore[arg-type]
    return f"{device} named" if device in OTHER_VENDORS else ""


def _family_pattern(stem: str) -> tuple[str, str] | None:
    """(device, a regex of the family's stems) when ``stem`` has one device word as a whole ``_``-part."""
    parts = stem.split("_")
    hits = [i for i, p in enumerate(parts) if p.lower() in _DEVICE_WORDS]
    if len(hits) != 1:
        return None
    i = hits[0]
    device = _DEVICE_WORDS[parts[i].lower()]
    before, after = "_".join(parts[:i]), "_".join(parts[i + 1 :])
    regex = "^" + (re.escape(before) + "_" if before else "") + "([a-z]+)" + ("_" + re.escape(after) if after else "")
    return device, regex + r"\.py$"


@lru_cache(maxsize=4096)
def _listing(folder: str) -> tuple[str, ...]:
    try:
        return tuple(os.listdir(folder))
    except OSError:
        return ()


def _siblings(folder: str, regex: str) -> Iterable[str | None]:
    compiled = re.compile(regex, re.IGNORECASE)
    for name in _listing(folder):
        match = compiled.match(name)
        if match:
            yield _DEVICE_WORDS.get(match.group(1).lower())


def family_reason(family: str | None) -> str | None:
    """Why a module of this family stays whole, or None when it may be ported."""
    if not family:
        return None
    device, _, members = family.partition(" ")
    if members == "folder":
        return f"it is in a folder of {device} code"
    if members == "named":
        return f"it is named for {device}"
    if device == "npu":
        return f"it is the NPU member of a per-device family ({members}): already NPU code"
    if device == "cuda" and "npu" in members.split(","):
        return f"it is the CUDA member of a per-device family that has an NPU member ({members})"
    if device == "cuda":
        return f"it is the CUDA member of a per-device family ({members}): add an NPU member beside it"
    return f"it is the {device} member of a per-device family ({members})"


def cuda_member_without_npu(family: str | None) -> str | None:
    """The family's members when the module is its CUDA member and the family has no NPU member, else None."""
    if not family:
        return None
    device, _, members = family.partition(" ")
    if device != "cuda" or members in ("", "folder", "named") or "npu" in members.split(","):
        return None
    return members


# --- projects that already run on the NPU ------------------------------------------------------------------------

# What the port itself never writes: an NPU availability helper, a guarded `import torch_npu`, NPU modules.
# What an earlier port wrote (the attention and padding helpers of rules/attention/helpers.py, NPU700's range stack,
# the guarded import of rules/torch_npu_import.py) is no sign of the project's own NPU support: a project ported
# once gets its new CUDA code ported on the next run too.
_PORT_HELPERS = (
    rb"_npu_(?:flash_attn|memory_efficient_attention|index_first_axis|index_put_first_axis|unpad_input|pad_input"
    rb"|range_push|range_pop)"
)
_PORT_GUARD_NOTE = rb"registers the npu device where torch_npu is installed"
_NPU_SUPPORT = re.compile(
    rb"is_(?:torch_)?npu_available"
    rb"|def (?!" + _PORT_HELPERS + rb"\()\w*(?<![A-Za-z])npu(?![a-z])\w*\("  # `def is_npu(`, not `def input(`
    rb"|(?:try|if [^\n]*):[ \t]*\r?\n[ \t]+import torch_npu\b(?![^\n]*" + _PORT_GUARD_NOTE + rb")"
)


# Substrings every match of _NPU_SUPPORT holds (bar identifiers like `x2npu2`), far cheaper to look for than the
# pattern: most files of a CUDA project hold none of them (plain "npu" is in every "input").
_NPU_HINTS = (b"_npu", b"npu_", b"def npu", b"npu(")


def supports_npu(files: Iterable[str]) -> bool:
    """Does a project (its Python files) already support the NPU on its own? Then its CUDA branches are CUDA's on
    purpose: the port keeps every branch, table and setting that names CUDA and ports only unconditional CUDA code."""
    return npu_support(files) is not None


def npu_support(files: Iterable[str]) -> str | None:
    """The first of ``files`` that shows the project supports the NPU (see supports_npu), or None."""
    for path in files:
        folder, name = os.path.split(path)
        stem = name.rsplit(".", 1)[0]
        if _DEVICE_WORDS.get(os.path.basename(folder).lower()) == "npu" or "npu" in {
            _DEVICE_WORDS.get(part.lower()) for part in stem.split("_")
        }:
            return path
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            if any(hint in data for hint in _NPU_HINTS) and _NPU_SUPPORT.search(data):
                return path
        except OSError:
            continue
    return None
