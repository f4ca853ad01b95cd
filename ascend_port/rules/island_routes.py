"""The device objects NPU122 (rules/islands.py) may route a CUDA island's device through: accelerate's state, and a
device helper of the project's own; and the project step that finds what one module of a project tells the others
(its device helpers, its names bound to `torch.cuda.is_available()` that others import). Light (plain ast and
text, no LibCST): rules/registry.py imports it on runs the cache answers.

accelerate: `PartialState().device` (and `Accelerator().device`, which is `self.state.device`) is the device
accelerate chose for the process, and accelerate chooses the NPU where torch_npu is installed:
`PartialState.default_device` returns `torch.device("npu")` when `is_npu_available()` (checked before CUDA), and
`set_device` makes `npu:<local rank>` of `DistributedType.MULTI_NPU` (accelerate 1.15.0, accelerate/state.py,
`default_device` and `set_device`; accelerate/accelerator.py `Accelerator.device`). On a CUDA host it is `cuda` (or
`cuda:<local rank>`, the device `set_device` made current), where `"cuda"` and `.cuda()` ran.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Project, ProjectStep

if TYPE_CHECKING:  # (module_facts imports LibCST: not at run time here)
    from ascend_port.python.module_facts import ModuleFacts

# The classes whose instance's `.device` is accelerate's device, by what the module's imports resolve them to.
ACCELERATOR_CLASSES = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
# The states that are shared singletons: `PartialState()` (or `AcceleratorState()`) anywhere returns the state
# already made, so calling it where the island is costs nothing and makes no second one.
STATE_CLASSES = (
    "accelerate.PartialState",
    "accelerate.state.PartialState",
    "accelerate.AcceleratorState",
    "accelerate.state.AcceleratorState",
)


@dataclass(frozen=True)
class Bound:
    """A name bound to an `Accelerator(...)`, on ``line``, visible from ``first`` to ``last`` (its function)."""

    name: str
    line: int
    first: int
    last: int


def accelerator_objects(facts: ModuleFacts) -> list[Bound]:
    """The names the module binds to `Accelerator(...)` by a plain assignment (`accelerator = Accelerator()`), at
    its top level or in a function (visible in that function only)."""
    tree = facts.head
    if tree is None or not any(target in ACCELERATOR_CLASSES for target in facts.imports.aliases.values()):
        return []
    found: list[Bound] = []
    end = 1 << 30

    def scan(body: list[ast.stmt], first: int, last: int) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scan(statement.body, statement.lineno, statement.end_lineno or statement.lineno)
            elif isinstance(statement, ast.ClassDef):
                for inner in statement.body:
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        scan(inner.body, inner.lineno, inner.end_lineno or inner.lineno)
            elif (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Call)
                and _resolves(statement.value.func, facts) in ACCELERATOR_CLASSES
            ):
                found.append(Bound(statement.targets[0].id, statement.lineno, first, last))
            else:  # (the blocks of `if`, `with`, `for`, `try` at the same level)
                for block in ("body", "orelse", "finalbody"):
                    scan(getattr(statement, block, None) or [], first, last)

    scan(tree.body, 0, end)
    return found


def _resolves(func: ast.expr, facts: ModuleFacts) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or (base := facts.imports.aliases.get(func.id)) is None:
        return None
    return ".".join([base, *reversed(parts)])


def accelerate_device(facts: ModuleFacts, line: int) -> str | None:
    """The code of accelerate's device for an island on ``line``: the `Accelerator` bound before it in its scope
    (`accelerator.device`), else the shared state the module imports (`PartialState().device`) for an island in a
    function, else None (a module that imports `Accelerator` alone: a new `Accelerator()` would be a second one; at
    import time, where the first `PartialState()` would set up the process group)."""
    visible = [b for b in facts.get(accelerator_objects) if b.first <= line <= b.last and b.line < line]
    if visible:
        # the innermost scope's, the latest there (a name bound twice in one scope: none of it is guessed)
        best = max(visible, key=lambda b: (b.first, b.line))
        if sum(b.name == best.name for b in visible) == 1:
            return f"{best.name}.device"
    functions = (*facts.statements(ast.FunctionDef), *facts.statements(ast.AsyncFunctionDef))
    if not any(f.lineno <= line <= (f.end_lineno or f.lineno) for f in functions):
        return None
    for state in STATE_CLASSES:
        local = next((name for name, target in facts.imports.aliases.items() if target == state), None)
        if local is not None:
            return f"{local}().device"
    return None


# --- a device helper of the project's own -------------------------------------------------------------------------

_DEVICES = ("cuda", "npu", "cpu", "mps", "xpu", "hpu", "mlu", "musa")


def _spelled_device(value: ast.expr) -> str | None:
    """The device a string spells: `"npu"`, `"cuda:0"`, `f"cuda:{rank}"`, `"npu:{}".format(rank)`; else None."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format":
        value = value.func.value
    if isinstance(value, ast.JoinedStr) and value.values:
        value = value.values[0]
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    device = value.value.split(":", 1)[0]
    return device if device in _DEVICES else None


def _returned_device(value: ast.expr | None, names: dict[str, set[str | None]]) -> set[str | None]:
    """The devices a `return` gives: a device string, `torch.device(<one>)`, `torch.device("cuda", i)`, or a name
    the function binds to device strings alone (``names``: LLaMA-Factory's `get_current_device`, which returns
    `torch.device(device)`); {None} for anything else (a call the helper does not spell out)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "device":
        if not value.args or value.keywords or len(value.args) > 2:
            return {None}
        value = value.args[0]
    if isinstance(value, ast.Name):
        return names.get(value.id, {None})
    return {_spelled_device(value)} if value is not None else {None}


def is_device_helper(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does ``function`` choose a device among CUDA's and the NPU's: no required argument, no nested function, and
    every `return` gives a device it spells out (both CUDA and the NPU among them)? Such a helper already dispatches:
    an island routed through it runs where the helper says, which is CUDA on a CUDA host."""
    if isinstance(function, ast.AsyncFunctionDef) or function.decorator_list:
        return False
    arguments = function.args
    if len(arguments.defaults) < len(arguments.posonlyargs) + len(arguments.args):
        return False
    if any(default is None for default in arguments.kw_defaults):
        return False
    # the device of each plain assignment's value, by the id of its target (`device = "npu:{}".format(rank)`)
    assigned = {
        id(node.targets[0]): _spelled_device(node.value)
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    names: dict[str, set[str | None]] = {}  # a local name -> the devices it is bound to (None: something else)
    returns: list[ast.Return] = []
    for node in ast.walk(function):
        if node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.setdefault(node.id, set()).add(assigned.get(id(node)))
    returned: set[str | None] = set()
    for node in returns:
        returned |= _returned_device(node.value, names)
    return bool(returns) and None not in returned and {"cuda", "npu"} <= returned


def module_helpers(tree: ast.Module) -> list[tuple[str, int]]:
    """The device helpers ``tree`` defines at its top level, each with the line its definition ends on."""
    return [
        (statement.name, statement.end_lineno or statement.lineno)
        for statement in tree.body
        if isinstance(statement, ast.FunctionDef) and "device" in statement.name.lower() and is_device_helper(statement)
    ]


def imported_helpers(facts: ModuleFacts, helpers: tuple[str, ...]) -> list[str]:
    """The local names of the project's device helpers (``helpers``, qualified) that the module imports: by an
    absolute import, or a relative one whose module ends the helper's (`from ..extras.misc import
    get_current_device`: LLaMA-Factory's)."""
    if not helpers:
        return []
    found = {local for local, target in facts.imports.aliases.items() if target in helpers}
    for statement in facts.statements(ast.ImportFrom):
        if statement.level and statement.module:
            for alias in statement.names:
                if any(h.endswith(f".{statement.module}.{alias.name}") for h in helpers):
                    found.add(alias.asname or alias.name)
    return sorted(found)


def own_helpers(facts: ModuleFacts) -> list[tuple[str, int]]:
    """The device helpers the module itself defines (a fact of the module: rules/islands.py)."""
    tree = facts.head
    if tree is None or "npu" not in facts.text or "device" not in facts.text:
        return []
    return module_helpers(tree)


# --- the project step -----------------------------------------------------------------------------------------------

# `HAS_CUDA = torch.cuda.is_available()` at a module's top level (python/device_model.py routes these in a module)
_TOP_PREDICATE = re.compile(rb"^(\w+)[ \t]*=[ \t]*[\w.]*\bcuda\.is_available\(\)[ \t]*(?:#.*)?$", re.MULTILINE)
_DEF_NAME = re.compile(rb"def (\w+)\(")
_TOP_LEVEL = re.compile(rb"^(?=[^\s#)\]}])", re.MULTILINE)  # a line that starts a top-level statement
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)


def _module_name(path: Path) -> str | None:
    """``pkg.sub.mod`` for ``.../pkg/sub/mod.py`` (its packages: the folders with an ``__init__.py``)."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts)) or None


def _imported_names(text: bytes) -> set[tuple[bytes, bytes]]:
    """(the last part of the module, the name) of what the `from X import ...` statements of ``text`` import."""
    names: set[tuple[bytes, bytes]] = set()
    for match in _FROM_IMPORT.finditer(text):
        module = match.group(1).rsplit(b".", 1)[-1]
        listed = re.sub(rb"#[^\n]*", b"", match.group(2)).strip(b"() \t\n\\")
        for item in listed.split(b","):  # (`X as y`: X is the name imported)
            if words := item.split():
                names.add((module, words[0]))
    return names


def shared_predicates(texts: Iterable[tuple[Path, bytes]]) -> tuple[str, ...]:
    """The names a module binds to `torch.cuda.is_available()` at its top level that another module imports from
    it (`from pkg.env import HAS_CUDA`, `from .env import ...`; a package's `__init__` that passes it on is not
    followed)."""
    bound: dict[tuple[bytes, bytes], set[Path]] = {}  # (the module's file stem, the name) -> its files
    read = list(texts)
    for path, text in read:
        if b"is_available()" in text:
            for name in _TOP_PREDICATE.findall(text):
                bound.setdefault((path.stem.encode(), name), set()).add(path)
    if not bound:
        return ()
    names = {name for _, name in bound}
    shared = {
        imported[1]
        for path, text in read
        if b"import" in text and any(name in text for name in names)
        for imported in _imported_names(text) & bound.keys()
        if bound[imported] - {path}
    }
    return tuple(sorted(name.decode() for name in shared))


def _top_level_defs(text: bytes) -> Iterable[re.Match[bytes]]:
    """The `def name(` that start a line (bytes.find, much faster than a multi-line pattern over a large module)."""
    at = 0 if text.startswith(b"def ") else text.find(b"\ndef ")
    while at >= 0:
        if (match := _DEF_NAME.match(text, at + (text[at : at + 1] == b"\n"))) is not None:
            yield match
        at = text.find(b"\ndef ", at + 1)


def device_helpers(texts: Iterable[tuple[Path, bytes]]) -> tuple[str, ...]:
    """The device helpers of the project's modules, qualified (``pkg.utils.other.infer_device``), and as the
    packages above that name them in their ``__init__.py`` pass them on (``pkg.utils.infer_device``: peft's)."""
    read = dict(texts)
    found: list[str] = []
    for path, text in read.items():
        if b"device" not in text or b"npu" not in text:
            continue
        for match in _top_level_defs(text):
            if b"device" not in match.group(1).lower():
                continue
            # (the definition alone is parsed: up to the next line that starts a top-level statement)
            end = _TOP_LEVEL.search(text, match.end())
            try:
                tree = ast.parse(text[match.start() : end.start() if end else len(text)])
            except (SyntaxError, ValueError):
                continue
            if (helpers := module_helpers(tree)) and (module := _module_name(path)) is not None:
                for name, _ in helpers:
                    found.append(f"{module}.{name}")
                    found += _passed_on(path, module, name, read)
    return tuple(sorted(set(found)))


def _passed_on(path: Path, module: str, name: str, read: dict[Path, bytes]) -> list[str]:
    """The names of ``name`` (defined in ``module`` at ``path``) in the packages above whose ``__init__.py`` names
    it (`from .other import infer_device`), up to the first that does not."""
    names = []
    parts = module.split(".")[:-1]  # (the package above `module`, whose folder is:)
    folder = path.parent if path.stem != "__init__" else path.parent.parent
    while parts and re.search(rb"\b%s\b" % re.escape(name.encode()), read.get(folder / "__init__.py", b"")):
        names.append(".".join([*parts, name]))
        parts, folder = parts[:-1], folder.parent
    return names


class ProjectDevices(ProjectStep):
    """What a module tells the others of the project, read once for the run from the Python files whose text may
    hold it (a search of their bytes; the definitions found parsed): in a project that supports the NPU already, its
    device helpers (PortOptions.device_helpers); in one that is ported in place, its names bound to
    `torch.cuda.is_available()` that other modules import (PortOptions.shared_cuda_predicates: an NPU-aware port
    keeps both sides of them as they are)."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        texts = _texts(path for path in project.files if path.suffix == ".py")
        if options.npu_aware:
            helpers = device_helpers(texts)
            return replace(options, device_helpers=helpers) if helpers else options
        shared = shared_predicates(texts)
        return replace(options, shared_cuda_predicates=shared) if shared else options


def _texts(paths: Iterable[Path]) -> Iterable[tuple[Path, bytes]]:
    for path in paths:
        try:
            yield path, path.read_bytes()
        except OSError:
            continue


PROJECT_STEPS = (ProjectDevices(),)
