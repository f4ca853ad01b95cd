"""The attention helpers once per package: a module the port writes, imported by the modules that call them.

Each file is ported on its own, so the attention rules write `_npu_flash_attn` and friends into every module that
calls them (helpers.py). After the per-file ports (and after the result cache: the per-file results stay what they
are) this project step (core/porting.ProjectStep.plan) moves the helpers of the ported modules of one top-level
package into one module, ``MODULE_NAME`` in that package, and puts an import in their place: relative inside the
package (``from ._ported_attention import _npu_flash_attn``, ``from .._ported_attention import ...`` in a
sub-package), absolute (``from pkg._ported_attention import ...``) from a script in the folder that holds the
package. A package never imports another's module. Where no import path is certain the helpers stay inline: a
module alone in its package, the scripts of a folder without a package (a folder without ``__init__.py``, a
namespace package among them: a plain ``from _ported_attention import`` works only where that folder is on
``sys.path``), a module whose helpers are not exactly what the port writes, a package above the paths given, or a
file of that name that ascend-port did not write. The interactive review runs before this step, so a module is made only from accepted
files."""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import ProjectStep
from ascend_port.core.sources import SourceError, decode_python, python_lines
from ascend_port.rules.attention.helper_names import DEPENDS, FLASH_HELPER, MASK_CACHE, PADDING_HELPERS

MODULE_NAME = "_ported_attention"  # (no `npu`/`ascend` part: such a file name marks a project as NPU-aware)
MARKER = "# Written by ascend-port"  # the module's first line: how a later run knows the file is its own
HELPERS = tuple(DEPENDS)  # dependency order
_CREDIT = re.compile(r"\(written by ascend-port, ([^)]*)\)")
# Words one of which every helper line holds (a substring search is ten times faster than _HELPER_LINE's).
_HELPER_WORDS = (os.path.commonprefix(HELPERS) or "def", MASK_CACHE)
# A line that can start a helper definition (see _is_helper): a top-level `def <helper>` or the mask cache.
_HELPER_LINE = re.compile(
    rf"^(?:def[ \t]+(?:{'|'.join(map(re.escape, DEPENDS))})\b|{re.escape(MASK_CACHE)}[ \t]*=)", re.MULTILINE
)

HEADER = '''\
{marker}: the attention helpers of the NPU port, shared by the modules that call them.
# Do not edit it by hand: `ascend-port apply` rewrites it when a module it ports needs a helper this file lacks
# (delete the file and port the original callers again to regenerate it from scratch).
"""Attention helpers of the NPU port (torch_npu.npu_fusion_attention), written by ascend-port."""

import torch
import torch_npu


'''


@dataclass
class Block:
    """The helper definitions the port wrote into one module (lines 1-based, inclusive)."""

    spans: list[tuple[int, int, bool]]  # each run of helper statements: its first and last line, and whether a
    # function or class is next to it (the blank lines above it were there before the port)
    defined: tuple[str, ...]  # helper names, MASK_CACHE excluded
    used: tuple[str, ...]  # the helpers the rest of the module calls
    credits: dict[str, str]
    import_after: int  # the line after which the import goes (0: in place of the first run)


@dataclass
class SharedModule:
    path: Path  # absolute
    text: str
    imports: dict[Path, str] = field(default_factory=dict)  # importing file (absolute) -> the import's module part
    existing: bool = False  # the file is there already (an earlier run wrote it)

    def rewrite(self, path: Path, data: bytes) -> bytes:
        """``data`` (a version of ``path``) with its helper block replaced by the import; unchanged when it has none."""
        module = self.imports.get(path)
        if module is None:
            return data
        try:
            source = decode_python(data)
        except SourceError:
            return data
        text = replace_block(source.text, module)
        return data if text is None else source.encode(text)


def find_block(text: str) -> Block | None:
    """The top-level helper definitions that helpers.py inserts (one run of statements per rule family that wrote
    some: NPU400's and NPU410's each go in front of their own first caller), or None."""
    if not any(word in text for word in _HELPER_WORDS) or not _HELPER_LINE.search(text):
        return None  # (no top-level helper: most ported modules, known without parsing them on every run)
    return _read_block(text)


@functools.lru_cache(maxsize=16)
def _read_block(text: str) -> Block | None:
    """find_block's answer for a module with a helper line (cached: the plan reads each ported module and the
    rewrite the same text again; a Block is never changed)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    body = tree.body
    mine = [i for i, node in enumerate(body) if _is_helper(node)]
    if not mine:
        return None
    nodes = [body[i] for i in mine]
    defined = tuple(n.name for n in nodes if isinstance(n, ast.FunctionDef))
    credits = {}
    for node in nodes:
        if isinstance(node, ast.FunctionDef):
            match = _CREDIT.search(ast.get_docstring(node) or "")
            if match is None:
                return None  # not the port's own text: leave it where it is
            credits[node.name] = match.group(1)
    if FLASH_HELPER in defined and not any(isinstance(n, ast.Assign) for n in nodes):
        return None
    rest = [node for i, node in enumerate(body) if i not in mine]
    used = set().union(*(_loaded(node) for node in rest)) & set(defined) if rest else set()
    if not used:
        return None
    runs: list[list[int]] = []
    for i in mine:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    spans = []
    for run in runs:
        first, last = body[run[0]], body[run[-1]]
        start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        spaced = any(isinstance(body[i], _SPACED) for i in (run[0] - 1, run[-1] + 1) if 0 <= i < len(body))
        spans.append((start, last.end_lineno or last.lineno, spaced))
    imports = [n for n in body[: mine[0]] if isinstance(n, (ast.Import, ast.ImportFrom))]
    return Block(
        spans,
        defined,
        tuple(n for n in HELPERS if n in used),
        credits,
        (imports[-1].end_lineno or imports[-1].lineno) if imports else 0,
    )


_SPACED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _is_helper(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef):
        return node.name in DEPENDS
    if isinstance(node, ast.Assign):
        return [getattr(t, "id", None) for t in node.targets] == [MASK_CACHE]
    return False


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def replace_block(text: str, module: str) -> str | None:
    """``text`` without the helper definitions (and the blank lines the port put around them) and with
    ``from <module> import <the helpers it uses>`` after the module's leading imports (or where the first were)."""
    block = find_block(text)
    if block is None:
        return None
    lines = python_lines(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    statement = f"from {module} import {', '.join(block.used)}{newline}"
    removed: set[int] = set()  # 0-based line indexes
    first = len(lines)
    for start, end, spaced in block.spans:
        for _ in range(2):  # the two blank lines the port writes after a run of helpers
            if end < len(lines) and not lines[end].strip():
                end += 1
        if not spaced:  # and the ones it wrote above it, between two statements that had none
            while start > 1 and not lines[start - 2].strip():
                start -= 1
        removed.update(range(start - 1, end))
        first = min(first, start - 1)
    out = []
    for i, line in enumerate(lines):
        if i == first and not block.import_after:
            out += [statement, newline, newline]
        if i not in removed:
            out.append(line)
        if i == block.import_after - 1:
            out.append(statement)
    return "".join(out)


def module_text(helpers: Iterable[str], credits: dict[str, str], backend: str) -> str:
    from ascend_port.rules.attention.helpers import helper_source  # (LibCST: only when a module is written)

    names = [n for n in HELPERS if n in set(helpers)]
    for name in list(names):
        names += [d for d in DEPENDS[name] if d not in names]
    names = [n for n in HELPERS if n in names]
    sources = [
        helper_source(n, "torch", "torch_npu", backend if n not in PADDING_HELPERS else "torch_npu", credits[n])
        for n in names
    ]
    return HEADER.format(marker=MARKER) + "\n\n".join(sources)


def _package(path: Path) -> tuple[Path, tuple[str, ...]]:
    """The folder on ``sys.path`` that imports the file (the parent of its top-level package, or its own folder
    for a script), and the names of its packages from the top one down."""
    folder, parts = path.parent, list[str]()
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, tuple(parts)


def _import_path(packages: tuple[str, ...], top: str | None) -> str:
    if not packages:
        return f"{top}.{MODULE_NAME}"  # (a script beside its package)
    return "." * len(packages) + MODULE_NAME


@dataclass
class Shared:
    """The shared modules of a run: one per top-level package whose ported modules define helpers."""

    modules: list[SharedModule]
    notes: list[str] = field(default_factory=list)
    domain: str = "NPU4"  # (the helpers come with the attention rules' commit)

    def rewrite(self, path: Path, data: bytes) -> bytes:
        for module in self.modules:
            if path in module.imports:
                return module.rewrite(path, data)
        return data


def plan(files: Iterable[tuple[Path, str]], backend: str, roots: Iterable[Path] = ()) -> Shared:
    """Where the shared modules go and who imports them, for the ported texts of ``files`` (absolute paths), with
    notes for stderr when helpers stay inline for a reason the user should know. One module per top-level package
    (the scripts of its folder join the biggest one; scripts with no package beside them keep their helpers): a
    package never imports from another. ``roots``: the folders the run was given (absolute); a module is written
    inside one of them, never above."""
    blocks: dict[Path, Block] = {}
    for path, text in files:
        if path.suffix == ".py" and path.name != "setup.py" and (block := find_block(text)) is not None:
            blocks[path] = block
    groups: dict[tuple[Path, str | None], list[Path]] = {}
    for path in blocks:
        root, packages = _package(path)
        groups.setdefault((root, packages[0] if packages else None), []).append(path)
    shared = Shared([])
    for (root, top), members in groups.items():
        scripts = groups.get((root, None), []) if top else []
        beside = [k for k in groups if k[0] == root and k[1] is not None]  # the top-level packages of the folder
        if top is None:
            # (they join their folder's biggest package; a folder of scripts alone, or a namespace package, has no
            # import path that is certain: `from _ported_attention import` works only where it is on sys.path)
            continue
        if scripts and (root, top) == max(beside, key=lambda k: (len(groups[k]), k[1] or "")):
            members = members + scripts
        _add_module(shared, root, top, members, blocks, backend, [*roots])
    return shared


def _add_module(
    shared: Shared,
    root: Path,
    top: str | None,
    members: list[Path],
    blocks: dict[Path, Block],
    backend: str,
    roots: list[Path],
) -> None:
    if len(members) < 2:
        return  # one module alone keeps its helpers
    folder = root / top if top else root
    target = folder / f"{MODULE_NAME}.py"
    if roots and not any(folder.is_relative_to(root) for root in roots):
        shared.notes.append(
            f"the attention helpers stay inline: their shared module would go to {_shown(folder)}/, above the paths "
            "given (port the whole package to share them)"
        )
        return
    needed: set[str] = set()
    credits: dict[str, str] = {}
    for path in members:
        needed.update(blocks[path].defined)
        credits.update(blocks[path].credits)
    existing = target.exists() or target.is_symlink()
    if existing:
        try:
            old = target.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            old = ""
        if not old.startswith(MARKER) or target.is_symlink():
            shared.notes.append(
                f"{_shown(target)} exists and was not written by ascend-port: the attention helpers stay inline"
            )
            return
        for node in ast.parse(old).body:
            if isinstance(node, ast.FunctionDef) and node.name in DEPENDS:
                needed.add(node.name)
                if (match := _CREDIT.search(ast.get_docstring(node) or "")) is not None:
                    credits.setdefault(node.name, match.group(1))
    if not needed <= credits.keys():
        return
    module = SharedModule(target, module_text(needed, credits, backend), existing=existing)
    for path in members:
        module.imports[path] = _import_path(_package(path)[1], top)
    shared.modules.append(module)


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


class SharedHelpers(ProjectStep):
    """The project step: the helpers of the ported modules of one package, written once (see the module's doc)."""

    definitions = MappingProxyType(DEPENDS)

    def plan(self, texts: Sequence[tuple[Path, str]], options: PortOptions, roots: Sequence[Path]) -> Shared:
        return plan(texts, options.attention_backend, roots)


PROJECT_STEPS = (SharedHelpers(),)
