"""``ascend-port check-api``: the target check of the port (rules/target_api.py, NPU190) run alone over a project,
ported or written for the NPU by hand, so that CI can keep its ``torch_npu`` / ``torch.npu`` names valid for the
torch-npu release it pins. Notebooks are checked too: their code cells, read as one module."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.porting import PortError
from ascend_port.core.sources import SourceError, decode_python, decode_text
from ascend_port.formats.jsonspan import JNode
from ascend_port.python.api_names import missing_names
from ascend_port.run.discovery import Exclude, Skipped, discover
from ascend_port.run.engine import display_path

# A module that names neither torch_npu nor a word `npu` uses no name the check looks at ("input" holds "npu").
MAY_USE_NPU = re.compile(r"torch_npu|\bnpu\b")


@dataclass(frozen=True)
class Missing:
    path: str
    line: int
    name: str
    message: str


@dataclass
class ApiReport:
    version: str
    files: int = 0
    missing: list[Missing] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    skipped: list[Skipped] = field(default_factory=list)


def check_api(paths: list[Path], version: str, exclude: tuple[Exclude, ...] = ()) -> ApiReport:
    """Every missing name of the Python modules under ``paths`` (``version``: a covered release)."""
    report = ApiReport(version)
    files = discover(paths, lambda p: p.suffix in (".py", ".ipynb"), exclude, report.skipped)
    for path in files:
        shown = display_path(path)
        report.files += 1
        line_of: Callable[[int], int] = int  # (a module's lines are the file's)
        try:
            if path.suffix == ".ipynb":
                tree, line_of = _notebook_module(decode_text(path.read_bytes()).text)
            else:
                text = decode_python(path.read_bytes()).text
                if not MAY_USE_NPU.search(text):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SyntaxWarning)
                    tree = ast.parse(text)
        except (OSError, SourceError, SyntaxError, ValueError, PortError) as error:
            reason = getattr(error, "strerror", None) or getattr(error, "msg", None) or str(error)
            report.errors.append((shown, f"cannot read: {reason}"))
            continue
        report.missing += [
            Missing(shown, line_of(n.line), n.name, message) for n, message in missing_names(tree, version)
        ]
    return report


def _notebook_module(text: str) -> tuple[ast.Module, Callable[[int], int]]:
    """A notebook's code cells as one module (a name imported in one cell is used in the next; magics are masked,
    a cell that does not parse is left out) and the notebook file's line for each of its lines."""
    from ascend_port.formats.jsonspan import parse
    from ascend_port.formats.textedit import LineIndex
    from ascend_port.port.notebook import _cell_ast, _code_source, _json_line, _load_notebook

    _load_notebook(text)  # (PortError for what is not an nbformat 4 notebook)
    cells = parse(text).get("cells")
    lines = LineIndex(text)
    body: list[ast.stmt] = []
    starts: list[tuple[int, JNode]] = []  # (the module's line before the cell's first, the cell's source)
    offset = 0
    for cell in cells.items if cells is not None else []:
        code = _code_source(cell)
        if code is None or not MAY_USE_NPU.search(code[1]) or (tree := _cell_ast(code[1])) is None:
            continue
        starts.append((offset, code[0]))
        body += ast.increment_lineno(tree, offset).body
        offset += code[1].count("\n") + 1

    def line_of(line: int) -> int:
        before, source = next((s for s in reversed(starts) if s[0] < line), starts[0])
        return _json_line(lines, source, line - before)

    return ast.Module(body=body, type_ignores=[]), line_of


def render(report: ApiReport) -> list[str]:
    """``path:line  name  message`` lines, then the totals per file and overall."""
    lines = [f"{m.path}:{m.line}  {m.name}  {m.message}" for m in report.missing]
    per_file: dict[str, int] = {}
    for m in report.missing:
        per_file[m.path] = per_file.get(m.path, 0) + 1
    lines += [f"{path}: {count} missing" for path, count in per_file.items()]
    count = len(report.missing)
    verdict = f"{count} name{'s' if count > 1 else ''} missing" if report.missing else "every name exists"
    files = f"{report.files} file{'' if report.files == 1 else 's'}"
    lines.append(f"{files} checked against torch_npu {report.version}: {verdict}")
    return lines
