"""NPU100: ``import torch_npu`` in each ported module that needs it, placed where a reader expects it.

The rewrites of the other rules only say that their output needs torch_npu (``PortContext.uses_npu``); the Python
port (``ascend_port.port.python``) then asks this module where the import goes and adds it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import TODO_PREFIX, Finding
from ascend_port.core.sources import python_lines
from ascend_port.python.chunks import Splice
from ascend_port.python.names import dotted
from ascend_port.python.parsing import parse_or_fail, parse_quietly

IMPORT_TORCH_NPU = rule(
    "NPU100",
    "import-torch-npu",
    Confidence.HIGH,
    "Add `import torch_npu` once to each ported module that imports torch.",
    """
    torch_npu registers the `npu` device, `torch.npu` and `Tensor.npu()`. Since torch 2.5 it is also autoloaded,
    but an explicit import keeps the dependency visible and works with autoloading turned off
    (`TORCH_DEVICE_BACKEND_AUTOLOAD=0`). It goes right after `import torch` (never before a module docstring or
    `from __future__`), or before the first torch import when the module has no plain `import torch`, and is never
    added twice (a guarded `try: import torch_npu` counts). In a module whose only rewrites add NPU branches beside
    other devices' (NPU120), it is guarded by `try: ... except ImportError: pass`: the module must still import on
    those devices. Where a rewrite calls `torch_npu.` it is added even when `--ignore`, `--select` or an
    `ignore-file[NPU100]` comment leave this rule out: without it the module would raise NameError at its first call.

    Before:
        import torch
        x = torch.ones(2).cuda()
    After:
        import torch
        import torch_npu
        x = torch.ones(2).npu()
    """,
    line_in_new_text=True,
    serves_others=True,
    follows=("ALL",),
)


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


def top_statements(body: Sequence[ast.stmt], lines: Sequence[tuple[int, int]] | None = None) -> list[TopStatement]:
    """The top-level statements of a module as ``ast`` read them; ``lines``: their spans, if not their own."""
    out = []
    for i, node in enumerate(body):
        if isinstance(node, ast.Import):
            kind = _import_kind([a.name for a in node.names], is_from=False)
        elif isinstance(node, ast.ImportFrom):
            kind = _import_kind([node.module or ""] if node.level == 0 else [""], is_from=True)
        elif isinstance(node, ast.Try) and any(
            isinstance(inner, ast.Import) and [a.name for a in inner.names] == ["torch_npu"] for inner in node.body
        ):
            kind = "torch_npu"  # `try: import torch_npu` (a project that also runs elsewhere): never a second one
        elif (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            kind = "docstring"
        else:
            kind = "code"
        first, last = lines[i] if lines else (node.lineno, node.end_lineno or node.lineno)
        out.append(TopStatement(kind, first, last))
    return out


def spliced_statements(body: Sequence[ast.stmt], splices: Sequence[Splice]) -> list[TopStatement]:
    """The top-level statements after ``splices``, from the module's ``ast`` before them and the new statements of
    the top-level chunks: the lines of the others move by what the chunks above them added or removed."""

    def moved(line: int, end: bool) -> int:
        return line + sum(s.added for s in splices if s.last < line or (end and s.last == line))

    replaced = [s for s in splices if s.body is not None]
    placed = [
        (node, moved(node.lineno, False), moved(node.end_lineno or node.lineno, True))
        for node in body
        if not any(s.first <= node.lineno <= s.last for s in replaced)
    ]
    for s in replaced:
        at = moved(s.first, False) - 1
        placed += [(node, at + node.lineno, at + (node.end_lineno or node.lineno)) for node in s.body or ()]
    placed.sort(key=lambda item: item[1])
    return top_statements([node for node, _, _ in placed], [(first, last) for _, first, last in placed])


def statements_from_cst(module: cst.Module) -> list[TopStatement]:
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
        elif isinstance(node, cst.Try) and "import torch_npu" in cst.Module([]).code_for_node(node.body):
            kind = "torch_npu"
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


# A module that still serves its other devices (the port only added NPU branches beside theirs) must still import
# where torch_npu is not installed.
GUARDED_IMPORT = (
    "try:{nl}"
    "    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed){nl}"
    "except ImportError:{nl}"
    "    pass{nl}"
)


def with_torch_npu_import(
    text: str,
    statements: Sequence[TopStatement],
    uses_torch_npu_name: bool,
    findings: list[Finding],
    guarded: bool = False,
) -> str:
    """``text`` with ``import torch_npu`` where it goes; ``guarded``: in a try/except ImportError."""
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
    newline = neighbour[len(neighbour.rstrip("\r\n")) :] or "\n"  # the line ending of the line above
    if 0 < index <= len(lines) and not lines[index - 1].endswith(("\n", "\r")):
        lines[index - 1] += newline
    if guarded:
        lines[index:index] = python_lines(GUARDED_IMPORT.format(nl=newline))
        findings.append(Finding(IMPORT_TORCH_NPU, index + 2, "import torch_npu added (guarded)", applied=True))
    else:
        lines.insert(index, "import torch_npu" + newline)
        findings.append(Finding(IMPORT_TORCH_NPU, index + 1, "import torch_npu added", applied=True))
    new_text = "".join(lines)
    if not _between_top_level_statements(lines, index):
        # (never seen: the statements' lines were wrong; check the whole module then)
        parse_or_fail(new_text)
    return new_text


def _between_top_level_statements(lines: Sequence[str], index: int) -> bool:
    """Is line ``index`` (0-based) where a top-level statement may go? The lines above it parse as a module (so it
    is not inside a statement, a bracket or a string), and the next line of code is not indented (so it does not
    cut a block in two). The lines above are the module's imports: a far cheaper check than parsing the module."""
    following = next((line for line in lines[index + 1 :] if line.strip() and not line.lstrip().startswith("#")), "")
    if following[:1].isspace() or re.match(r"(?:else|elif|except|finally)\b", following):
        return False  # it would cut a block, or a statement from its clause
    return parse_quietly("".join(lines[:index])) is not None
