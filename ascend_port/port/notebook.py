"""Jupyter notebooks (nbformat 4): every code cell goes through the Python port, its ``!cmd`` lines and ``%%bash``
cells through the shell rules, ``%env`` through the variable renames.

IPython syntax is not Python, so magic lines are masked with placeholder statements (same indentation, same number
of lines) before the Python port and put back after it. Only the ``source`` strings of changed cells are
rewritten, in place in the JSON text, in the notebook's own layout (indentation, separators, escaping), so outputs,
metadata, markdown and unchanged cells keep every byte. The result must load with json and nbformat and hold
exactly the intended sources; a notebook nbformat found valid must still be valid.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_text
from ascend_port.formats.jsonspan import JNode, dumps_like, parse
from ascend_port.formats.textedit import Edit, LineIndex, TextPort
from ascend_port.rules.project.shell import ShellContext, port_shell_code, rename_site
from ascend_port.rules.torch_npu_import import IMPORT_TORCH_NPU

_PLACEHOLDER = "__ascend_port_magic_{}__"
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)__ascend_port_magic_(\d+_\d+)__[ \t]*$")
_MAGIC = re.compile(r"^[ \t]*(?:[!%]|[\w.]+[ \t]*=[ \t]*[!%])")
_HELP = re.compile(r"^[ \t]*(?:\?+[\w.]+|[\w.]+\?{1,2})[ \t]*$")
# `!cmd`, `x = !cmd`, `%sx cmd`, `%system cmd`, and the package magics (`%pip install ...`: the rest is the command)
_SHELL_MAGIC = re.compile(
    r"^([ \t]*(?:[\w.]+[ \t]*=[ \t]*)?(?:!!?|%sx[ \t]+|%system[ \t]+|%(?=(?:pip|uv|conda|mamba)[ \t])))"
)
_ENV_MAGIC = re.compile(r"^[ \t]*%env[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_]*)")
_SHELL_CELLS = re.compile(r"^%%(?:bash|sh|script[ \t]+(?:bash|sh))\b")
_PYTHON_CELLS = re.compile(r"^%%(?:time|timeit|capture|prun)\b")


def split_lines(text: str) -> list[str]:
    """Lines as Jupyter stores them: split after each ``\\n`` only."""
    return re.findall(r"[^\n]*\n|[^\n]+", text)


@dataclass
class CellPort:
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)  # lines are cell lines (1-based)
    python_rewrites: bool = False


def _port_magic(context: str, text: str, selection: Selection, options: PortOptions) -> TextPort:
    """One magic line (with its continuation lines): shell commands and %env. ``context``: the comment lines right
    above it in the cell, so a TODO written by an earlier run is seen and not written twice; ``options``: the run's
    (an install of the project's CUDA extra, `!pip install .[gpu]`, installs its npu extra: PortOptions.cuda_extras)."""
    port = TextPort(context + text, selection, options)
    base = len(context)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    if m := _SHELL_MAGIC.match(text):
        port_shell_code(port, text[m.end() :], ShellContext(base=base + m.end(), todo_above=base, todo_indent=indent))
    elif m := _ENV_MAGIC.match(text):
        rename_site(
            port,
            base + m.start("name"),
            m.group("name"),
            lambda rule, at, message: port.todo(rule, at, message, above=base, indent=indent),
        )
    return port


def port_cell(text: str, selection: Selection, options: PortOptions, prelude: tuple[str, ...] = ()) -> CellPort:
    """Port one code cell. ``prelude``: import lines of the cells above, so ``torch`` in this cell resolves like the
    kernel resolves it; the prelude ends with ``import torch_npu`` so the Python port never adds one inside a cell
    (the notebook adds it once, after the first ``import torch``)."""

    lines = split_lines(text)
    if not lines:
        return CellPort(None)
    if lines[0].lstrip().startswith("%%"):
        decided = _port_cell_magic(text, lines, selection, options)
        if decided is not None:
            return decided
    masked, magics = _mask_magics(lines)
    findings: list[Finding] = []
    python = _port_python("".join(masked), selection, options, prelude)
    findings += python.findings
    python_rewrites = any(f.applied and f.rewrites for f in python.findings)
    ported_magics, magic_findings = _port_magics(lines, magics, selection, options)
    findings += magic_findings
    if python.new_text is None and ported_magics == ["".join(g) for _, g in magics]:
        return CellPort(None, findings)
    new_text = _unmask(python.new_text if python.new_text is not None else "".join(masked), ported_magics)
    return CellPort(new_text if new_text != text else None, findings, python_rewrites)


def _port_cell_magic(text: str, lines: list[str], selection: Selection, options: PortOptions) -> CellPort | None:
    """The port of a cell that starts with a cell magic (``%%``): a shell cell goes through the shell rules, a cell
    in another language is left alone; None for the magics that run the cell's Python (``%%time``, ...)."""
    first = lines[0].lstrip()
    if _SHELL_CELLS.match(first):
        port = TextPort(text, selection, options)
        port_shell_code(port, text[len(lines[0]) :], ShellContext(base=len(lines[0])))
        return CellPort(port.result(), port.findings)
    if not _PYTHON_CELLS.match(first):
        return CellPort(None)  # %%writefile, %%html, ...: not code this tool ports
    return None


def _mask_magics(lines: list[str]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The cell's lines with each magic (a line and its continuation lines) replaced by placeholder statements of
    the same indentation and number of lines, and the magics: (first cell line, 0-based; its physical lines)."""
    masked: list[str] = []
    magics: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (i == 0 and line.lstrip().startswith("%%")) or _MAGIC.match(line) or _HELP.match(line.rstrip("\r\n")):
            group = [line]
            while line.rstrip("\r\n").endswith("\\") and i + 1 < len(lines):
                i += 1
                line = lines[i]
                group.append(line)
            indent = group[0][: len(group[0]) - len(group[0].lstrip(" \t"))]
            for j, physical in enumerate(group):
                ending = physical[len(physical.rstrip("\r\n")) :]
                masked.append(indent + _PLACEHOLDER.format(f"{len(magics)}_{j}") + ending)
            magics.append((i - len(group) + 1, group))
        else:
            masked.append(line)
        i += 1
    return masked, magics


def _port_magics(
    lines: list[str], magics: list[tuple[int, list[str]]], selection: Selection, options: PortOptions
) -> tuple[list[str], list[Finding]]:
    """Each magic's new text (its old text when unchanged) and the findings, with cell line numbers."""
    ported: list[str] = []
    findings: list[Finding] = []
    for first_line, group in magics:
        above = first_line
        while above > 0 and lines[above - 1].lstrip().startswith("#"):
            above -= 1
        context = "".join(lines[above:first_line])
        magic = _port_magic(context, "".join(group), selection, options)
        new_magic = magic.result()
        ported.append(new_magic[len(context) :] if new_magic is not None else "".join(group))
        findings += [replace(f, line=f.line + above) for f in magic.findings]
    return ported, findings


def _port_python(text: str, selection: Selection, options: PortOptions, prelude: tuple[str, ...]):
    from ascend_port.port.python import PortOutcome, port_source

    head = "".join(line + "\n" for line in (*prelude, "import torch_npu"))
    outcome = port_source(head + text, selection, options)
    if outcome.new_text is not None and not outcome.new_text.startswith(head):
        # A file-level step touched the borrowed imports: port the cell on its own instead.
        head = ""
        outcome = port_source(text, selection, options)
    size = head.count("\n")
    findings = [replace(f, line=f.line - size) for f in outcome.findings]
    return PortOutcome(None if outcome.new_text is None else outcome.new_text[len(head) :], findings)


def _cell_ast(text: str) -> ast.Module | None:
    """The cell's Python syntax tree with its magic lines masked (same line numbers), or None."""
    masked = "".join(
        line[: len(line) - len(line.lstrip(" \t"))] + _PLACEHOLDER.format("0_0") + "\n"
        if _MAGIC.match(line) or _HELP.match(line.rstrip("\r\n"))
        else line
        for line in split_lines(text)
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(masked)
    except (SyntaxError, ValueError):
        return None


def cell_imports(text: str) -> list[str]:
    """The top-level import statements of a cell, one line each, for the prelude of the cells below."""
    tree = _cell_ast(text)
    if tree is None:
        return []
    return [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    ]


def _unmask(text: str, magics: list[str]) -> str:
    out: list[str] = []
    restored: set[int] = set()
    for line in split_lines(text):
        m = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if not m:
            out.append(line)
            continue
        index, part = (int(p) for p in m.group(2).split("_"))
        if part == 0:
            out.append(magics[index])
            restored.add(index)
    if restored != set(range(len(magics))):
        raise PortError("internal error: a notebook magic line was lost in the port; the notebook is left unchanged")
    return "".join(out)


# --- the notebook -----------------------------------------------------------------------------------------------------


def _add_torch_npu_import(texts: dict[int, str], order: list[int]) -> tuple[int, int] | None:
    """Insert ``import torch_npu`` after the first top-level ``import torch`` of the notebook; (cell, line) or None."""
    for k in order:
        tree = _cell_ast(texts[k])
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.Import) and any(a.name == "torch" for a in node.names):
                lines = split_lines(texts[k])
                at = node.end_lineno or node.lineno
                if at == len(lines) and not lines[-1].endswith("\n"):
                    lines[-1] += "\n"
                    lines.append("import torch_npu")
                else:
                    lines.insert(at, "import torch_npu\n")
                texts[k] = "".join(lines)
                return k, at + 1
    return None


def port_notebook(text: str, selection: Selection, options: PortOptions) -> tuple[str | None, list[Finding]]:
    from ascend_port.port.python import active_transformers

    data = _load_notebook(text)
    tree = parse(text)
    cells = tree.get("cells")
    if cells is None:  # (never: _load_notebook found the list)
        raise PortError("not an nbformat 4 notebook: no cells")
    lines = LineIndex(text)
    ensure_ascii = bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii()
    findings: list[Finding] = []
    new_sources: dict[int, str] = {}
    texts: dict[int, str] = {}
    code_cells: list[int] = []
    prelude: list[str] = []
    fragments = [f"(?:{t.pattern})" for cls in active_transformers(selection) for t in cls.triggers()]
    triggers = re.compile("|".join(fragments)) if fragments else None
    rewrites = False
    for k, cell in enumerate(cells.items):
        code = _code_source(cell)
        if code is None:
            continue
        source, cell_text = code
        code_cells.append(k)
        texts[k] = cell_text
        try:
            ported = port_cell(cell_text, selection, options, tuple(prelude))
        except PortError as error:
            raise PortError(f"cell {k + 1}: {error}") from None
        # Imports a transformer may rewrite stay out of the prelude (it must come back unchanged).
        prelude += [line for line in cell_imports(cell_text) if not (triggers and triggers.search(line))]
        findings += [replace(f, line=_json_line(lines, source, f.line)) for f in ported.findings]
        rewrites |= ported.python_rewrites
        if ported.new_text is not None:
            new_sources[k] = texts[k] = ported.new_text

    if rewrites and selection.enabled(IMPORT_TORCH_NPU):
        added = _torch_npu_import(texts, code_cells, new_sources, cells, lines)
        if added is not None:
            findings.append(added)
    if not new_sources:
        return None, findings
    edits = [
        Edit(
            cells.items[k].member("source").start,
            cells.items[k].member("source").end,
            _source_json(text, cells.items[k].member("source"), new, ensure_ascii),
        )
        for k, new in new_sources.items()
    ]
    from ascend_port.formats.textedit import apply_edits

    new_text = apply_edits(text, edits)
    _verify(text, new_text, data, new_sources, cells)
    return new_text, findings


def _load_notebook(text: str) -> dict[str, Any]:
    """The notebook's JSON, which must be an nbformat 4 notebook (a list of cells)."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise PortError(f"invalid notebook JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        version = data.get("nbformat") if isinstance(data, dict) else None
        raise PortError(
            f"not an nbformat 4 notebook (nbformat {version}): convert it with "
            "`jupyter nbconvert --to notebook --nbformat 4`"
        )
    return data


def _code_source(cell: JNode) -> tuple[JNode, str] | None:
    """A code cell's ``source`` node and its text; None for other cells and for a source that is not strings."""
    kind, source = cell.get("cell_type"), cell.get("source")
    if kind is None or kind.raw != '"code"' or source is None:
        return None
    tokens = source.items if source.kind == "array" else [source]
    if any(t.kind != "string" for t in tokens):
        return None
    return source, "".join(t.value for t in tokens)


def _json_line(lines: LineIndex, source: JNode, cell_line: int) -> int:
    """The line of the notebook file for line ``cell_line`` of a cell: that of its string in a ``source`` list,
    else that of the ``source`` string."""
    if source.kind == "array" and source.items:
        return lines.line_of(source.items[min(max(cell_line, 1), len(source.items)) - 1].start)
    return lines.line_of(source.start)


def _torch_npu_import(
    texts: dict[int, str], code_cells: list[int], new_sources: dict[int, str], cells: JNode, lines: LineIndex
) -> Finding | None:
    """Add ``import torch_npu`` (to ``texts`` and ``new_sources``) unless a code cell imports it already; the
    finding for it, or None when nothing was added."""
    if any(re.search(r"^[ \t]*(?:import|from)[ \t]+torch_npu\b", texts[k], re.M) for k in code_cells):
        return None
    added = _add_torch_npu_import(texts, code_cells)
    if added is None:
        return None
    k, cell_line = added
    new_sources[k] = texts[k]
    return Finding(
        IMPORT_TORCH_NPU,
        _json_line(lines, cells.items[k].member("source"), cell_line),
        "import torch_npu added",
        applied=True,
    )


def _source_json(text: str, source: JNode, new: str, ensure_ascii: bool) -> str:
    """The new ``source`` value, laid out like the old one; unchanged lines keep their original tokens."""
    if source.kind == "string":
        return dumps_like(new, ensure_ascii)
    old: dict[str, str] = {}
    for token in source.items:
        old.setdefault(token.value, token.raw)
    raws = [old.get(line) or dumps_like(line, ensure_ascii) for line in split_lines(new)]
    items = source.items
    open_ws = text[source.start + 1 : items[0].start] if items else "\n"
    close_ws = text[items[-1].end : source.end - 1] if items else ""
    sep = text[items[0].end : items[1].start] if len(items) > 1 else "," + open_ws
    return "[" + open_ws + sep.join(raws) + close_ws + "]" if raws else "[]"


def _verify(text: str, new_text: str, data: dict[str, Any], new_sources: dict[int, str], cells: JNode) -> None:
    import nbformat

    expected = copy.deepcopy(data)
    for k, new in new_sources.items():
        kind = cells.items[k].member("source").kind
        expected["cells"][k]["source"] = split_lines(new) if kind == "array" else new
    failure = "internal error: the ported notebook would not hold exactly the new sources; it is left unchanged"
    try:
        if json.loads(new_text) != expected:
            raise PortError(failure)
    except ValueError:
        raise PortError(failure) from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            valid_before = _valid(nbformat, text)
        except Exception:
            valid_before = False
        if valid_before and not _valid(nbformat, new_text):
            raise PortError(
                "internal error: the ported notebook would not pass nbformat validation; it is left unchanged"
            )


def _valid(nbformat, text: str) -> bool:
    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        nbformat.validate(notebook)
        return True
    except nbformat.ValidationError:
        return False


class NotebookHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        source = decode_text(data)
        new_text, findings = port_notebook(source.text, selection, options)
        return Ported(source, new_text, findings)
