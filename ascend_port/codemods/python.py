"""The port of one Python module.

Speed comes from parsing only what can change. A regular expression built from the enabled transformers'
triggers rejects most files without parsing them. For the rest, Python's ``ast`` (a C parser) gives the imports
and the line span of every top-level statement; only the statements that contain a trigger are parsed with LibCST,
transformed, and spliced back into the untouched text byte for byte. The whole-module path (``port_module``) is
what LibCST's own runner uses, and the fallback for sources this interpreter's ``ast`` cannot read.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ascend_port.codemods import PortError
from ascend_port.codemods.chunks import hot_chunks, wrap
from ascend_port.codemods.literals import TriggerFilter
from ascend_port.findings import TODO_PREFIX, Finding
from ascend_port.names import ImportIndex, dotted
from ascend_port.rules import Selection
from ascend_port.sources import python_lines
from ascend_port.transforms import TRANSFORMERS, PortContext, PortTransformer, run_transformers
from ascend_port.transforms.device import IMPORT_TORCH_NPU


@dataclass
class PortOutcome:
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)


def active_transformers(selection: Selection) -> tuple[type[PortTransformer], ...]:
    return tuple(cls for cls in TRANSFORMERS if cls.active(selection))


@lru_cache(maxsize=64)
def trigger_patterns(classes: tuple[type[PortTransformer], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """One pattern per scope (``statement``, ``top``) over the triggers of the transformers with that scope."""
    by_scope: dict[str, list[str]] = {}
    for cls in classes:
        by_scope.setdefault(cls.SCOPE, []).extend(cls.TRIGGERS)
    return tuple(
        (re.compile("|".join(f"(?:{f})" for f in fragments)), scope)
        for scope, fragments in sorted(by_scope.items()) if fragments
    )


@lru_cache(maxsize=64)
def trigger_filter(classes: tuple[type[PortTransformer], ...]) -> TriggerFilter:
    """trigger_patterns reduced, file by file, to the fragments whose literal text the file contains."""
    by_scope: dict[str, list[str]] = {}
    for cls in classes:
        by_scope.setdefault(cls.SCOPE, []).extend(cls.TRIGGERS)
    return TriggerFilter(sorted(by_scope.items()))


def port_source(text: str, selection: Selection, options: Mapping[str, str] | None = None) -> PortOutcome:
    """Port one module's source text. Raises PortError when it cannot be parsed."""
    try:
        return _port_source(text, selection, options)
    except RecursionError:
        # LibCST's visitors recurse once per level: thousands of implicitly concatenated strings or nested
        # brackets (generated tables such as pydoc_data/topics.py) exceed Python's recursion limit.
        raise PortError("a statement is nested too deeply for LibCST (Python's recursion limit); "
                        "the file is left unchanged") from None


def _port_source(text: str, selection: Selection, options: Mapping[str, str] | None = None) -> PortOutcome:
    classes = active_transformers(selection)
    patterns = trigger_filter(classes).patterns(text)  # the same matches as trigger_patterns(classes), faster
    if not any(pattern.search(text) for pattern, _ in patterns):
        return PortOutcome(None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of the user's code are not ours to print
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _port_whole_source(text, selection, options or {}, classes)
    ctx_args = dict(imports=ImportIndex.from_ast(tree), selection=selection, options=options or {}, module_ast=tree)
    findings: list[Finding] = []
    uses_npu = uses_torch_npu_name = False
    lines = python_lines(text)
    pieces: list[str] = []
    done = 0  # lines[:done] are already in pieces
    for chunk in hot_chunks(text, lines, tree, patterns):
        if chunk.first <= done:
            continue  # already ported as part of an enclosing statement (see the fallback below)
        first, last = chunk.first, chunk.last
        chunk_text = "".join(lines[first - 1:last])
        parse_text, prefix = wrap(chunk_text) if chunk.nested else (chunk_text, "")
        try:
            module = cst.parse_module(parse_text)
        except cst.ParserSyntaxError as error:
            if not chunk.nested:
                raise PortError(f"LibCST cannot parse line {first + error.raw_line - 1}: {error.message}") from None
            # A statement that only parses with its context: take the whole top-level statement instead.
            first, last = chunk.top
            chunk_text = parse_text = "".join(lines[first - 1:last])
            prefix = ""
            module = _parse_chunk(parse_text, first)
        ctx = PortContext(line_offset=first - 1 - (1 if prefix else 0), findings=findings, **ctx_args)
        new_code = _keep_final_cr(chunk_text, run_transformers(module, ctx, classes).code[len(prefix):])
        uses_npu |= ctx.uses_npu
        uses_torch_npu_name |= ctx.uses_torch_npu_name
        if new_code != chunk_text:
            pieces.append("".join(lines[done:first - 1]))
            pieces.append(new_code)
            done = last
    if done == 0:
        return PortOutcome(None, findings)
    pieces.append("".join(lines[done:]))
    new_text = "".join(pieces)
    new_tree = _parse_or_fail(new_text)
    new_text, new_tree = _finish(classes, new_text, new_tree, PortContext(findings=findings, **ctx_args))
    if uses_npu and selection.enabled(IMPORT_TORCH_NPU):
        new_text = _with_torch_npu_import(new_text, _statements_from_ast(new_tree), uses_torch_npu_name, findings)
        _parse_or_fail(new_text)
    return PortOutcome(new_text, findings)


def _finish(classes, text: str, tree: ast.Module, ctx: PortContext) -> tuple[str, ast.Module]:
    """Run each transformer's file-level step (PortTransformer.finish) on the ported text."""
    for cls in classes:
        new_text = cls.finish(text, tree, ctx)
        if new_text != text:
            text, tree = new_text, _parse_or_fail(new_text)
    return text, tree


def _parse_chunk(text: str, first: int) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise PortError(f"LibCST cannot parse line {first + error.raw_line - 1}: {error.message}") from None


def port_module(module: cst.Module, selection: Selection, options: Mapping[str, str] | None = None,
                ) -> tuple[cst.Module, list[Finding]]:
    """Port a whole parsed module (LibCST's runner and the fallback path)."""
    classes = active_transformers(selection)
    tree: ast.Module | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(module.code)
        imports = ImportIndex.from_ast(tree)
    except (SyntaxError, ValueError):
        imports = ImportIndex.from_cst(module)
    ctx = PortContext(imports=imports, selection=selection, options=options or {}, module_ast=tree)
    new_module = run_transformers(module, ctx, classes)
    if tree is not None:  # else this interpreter cannot read the module: the file-level steps are skipped
        new_text, _ = _finish(classes, new_module.code, _parse_or_fail(new_module.code), ctx)
        if new_text != new_module.code:
            new_module = cst.parse_module(new_text)
    if ctx.uses_npu and selection.enabled(IMPORT_TORCH_NPU):
        statements = _statements_from_cst(new_module)
        new_text = _with_torch_npu_import(new_module.code, statements, ctx.uses_torch_npu_name, ctx.findings)
        if new_text != new_module.code:
            new_module = cst.parse_module(new_text)
    return new_module, ctx.findings


def _port_whole_source(text, selection, options, classes) -> PortOutcome:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise PortError(f"cannot parse: {error.message} (line {error.raw_line})") from None
    new_module, findings = port_module(module, selection, options)
    new_text = _keep_final_cr(text, new_module.code)
    if new_text == text:
        return PortOutcome(None, findings)
    try:
        cst.parse_module(new_text)
    except cst.ParserSyntaxError:
        raise PortError("internal error: the ported source would not parse; the file is left unchanged") from None
    return PortOutcome(new_text, findings)


def _keep_final_cr(old: str, new: str) -> str:
    """LibCST drops the lone ``\r`` (classic Mac line ending) that ends a module; put it back."""
    if old.endswith("\r") and not new.endswith(("\r", "\n")):
        return new + "\r"
    return new


def _parse_or_fail(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError):
        raise PortError("internal error: the ported source would not parse; the file is left unchanged") from None


# --- import torch_npu (NPU100) --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopStatement:
    kind: str  # docstring | future | torch | torch-other | torch_npu | import | code
    first_line: int
    last_line: int


def _import_kind(modules: list[str], is_from: bool) -> str:
    if any(m == "torch_npu" or m.startswith("torch_npu.") for m in modules):
        # `from torch_npu.x import y` loads torch_npu but does not bind the name `torch_npu`.
        return "torch_npu-from" if is_from else "torch_npu"
    if not is_from and "torch" in modules:
        return "torch"
    if any(m == "torch" or m.startswith("torch.") for m in modules):
        return "torch-other"
    if is_from and modules == ["__future__"]:
        return "future"
    return "import"


def _statements_from_ast(tree: ast.Module) -> list[TopStatement]:
    out = []
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Import):
            kind = _import_kind([a.name for a in node.names], is_from=False)
        elif isinstance(node, ast.ImportFrom):
            kind = _import_kind([node.module or ""] if node.level == 0 else [""], is_from=True)
        elif i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            kind = "docstring"
        else:
            kind = "code"
        out.append(TopStatement(kind, node.lineno, node.end_lineno or node.lineno))
    return out


def _statements_from_cst(module: cst.Module) -> list[TopStatement]:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    out = []
    for i, node in enumerate(module.body):
        kind = "code"
        small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
        if isinstance(small, cst.Import):
            kind = _import_kind([dotted(a.name) or "" for a in small.names], is_from=False)
        elif isinstance(small, cst.ImportFrom):
            name = dotted(small.module) if small.module is not None and not small.relative else ""
            kind = _import_kind([name or ""], is_from=True)
        elif i == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
            kind = "docstring"
        where = positions[node]
        out.append(TopStatement(kind, where.start.line, where.end.line))
    return out


def torch_npu_import_line(statements: Sequence[TopStatement], uses_torch_npu_name: bool) -> int | None:
    """The 0-based line index before which ``import torch_npu`` goes, or None when it is not to be added."""
    if any(s.kind == "torch_npu" for s in statements):
        return None
    if not uses_torch_npu_name and any(s.kind == "torch_npu-from" for s in statements):
        return None
    # After `import torch`, unless another torch import (which may name torch.npu) comes first: then before that.
    for s in statements:
        if s.kind == "torch":
            return s.last_line
        if s.kind == "torch-other":
            return s.first_line - 1
    if not uses_torch_npu_name:
        return None
    index = 0
    for s in statements:
        if s.kind not in ("docstring", "future", "import"):
            break
        index = s.last_line
    return index


def _with_torch_npu_import(text: str, statements: Sequence[TopStatement], uses_torch_npu_name: bool,
                           findings: list[Finding]) -> str:
    index = torch_npu_import_line(statements, uses_torch_npu_name)
    if index is None:
        return text
    lines = python_lines(text)
    if any(index == s.first_line - 1 for s in statements):
        # Going in front of a statement: above the TODO comments of ours that belong to it, or a second run
        # would find the TODO detached from its statement and write it again.
        floor = max((s.last_line for s in statements if s.last_line <= index), default=0)
        while index > floor and lines[index - 1].lstrip().startswith(TODO_PREFIX.strip()):
            index -= 1
    neighbour = lines[index - 1] if 0 < index <= len(lines) else lines[0] if lines else ""
    newline = neighbour[len(neighbour.rstrip("\r\n")):] or "\n"  # the line ending of the line above
    if 0 < index <= len(lines) and not lines[index - 1].endswith(("\n", "\r")):
        lines[index - 1] += newline
    lines.insert(index, "import torch_npu" + newline)
    findings.append(Finding(IMPORT_TORCH_NPU, index + 1, "import torch_npu added", applied=True))
    return "".join(lines)
