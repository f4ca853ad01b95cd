"""The data of every report, built once from a ``RunResult``: findings placed in the scanned files, the edits behind
them, HIPIFY-style statistics, the dependency matrix, the kernel list, the risk matrix and the effort estimate.

Lines are lines of the files as scanned (before the port), 1-based, the same in every format (``lines.py``: NPU100's
finding, which the engine reports on the added ``import torch_npu``, is placed on the line the import goes after).
An edit is one run of changed lines (``hunks.FileChange``), from the old and new bytes of the file; each finding
belongs to the edit its rewrite or its TODO comment made (``edits.file_edits``). The findings and edits are built at
once, the rest (dependency matrix, kernels, risks, effort) when a format asks for it; ``build(..., edits=False)``
(the github annotations) reads and diffs nothing.

The old bytes are read from disk unless the caller passes them (``old``): a caller that has already written the
port (the git workflow) must pass them, or the edits of that file are left out (its findings are kept).
"""

from __future__ import annotations

import ast
import difflib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ascend_port import __version__
from ascend_port.core.catalogue import DOMAIN_TABLE, DOMAINS, Confidence, Rule
from ascend_port.core.findings import TODO_PATTERN, TODO_PREFIX, FileResult, Finding
from ascend_port.reports import effort as effort_model
from ascend_port.reports.dependencies import Dependency
from ascend_port.reports.dependencies import dependencies as find_dependencies
from ascend_port.reports.edits import ReportEdit, file_edits
from ascend_port.reports.lines import scanned_line
from ascend_port.reports.packages import REPLACE, UNSUPPORTED
from ascend_port.reports.performance import Performance, performance
from ascend_port.rules.registry import all_rules, is_kernel_todo
from ascend_port.run.discovery import Skipped
from ascend_port.run.engine import RunResult
from ascend_port.run.hunks import split_lines

# The names of the rule domains (ID prefix -> title), in ID order: the same in every format, the git workflow's
# commit messages and summary.md (git/domains.py), so a reader can follow one domain from report to commit.
DOMAIN_TITLES: dict[str, str] = {d.prefix: d.title for d in DOMAIN_TABLE}
CUDA_SUFFIXES = (".cu", ".cuh")


@dataclass
class Placed:
    """One finding at its place in the scanned file, with the edit that carries it out (if any)."""

    path: str
    finding: Finding
    line: int
    edit: ReportEdit | None = None

    @property
    def rule(self) -> Rule:
        return self.finding.rule

    @property
    def role(self) -> str:
        """``rewrite`` (the port makes it), ``manual`` (TODOs, report-only findings) or ``info`` (nothing to do)."""
        if self.rule.informational:
            return "info"
        return "rewrite" if self.finding.rewrites and self.finding.applied else "manual"


@dataclass
class FileStats:
    """HIPIFY's per-file block: references converted automatically and left for manual work, lines changed."""

    path: str
    converted: int = 0
    unconverted: int = 0
    lines_total: int = 0
    lines_changed: int = 0

    @property
    def conversion_percent(self) -> float | None:
        refs = self.converted + self.unconverted
        return round(100.0 * self.converted / refs, 1) if refs else None

    @property
    def changed_percent(self) -> float | None:
        return round(100.0 * self.lines_changed / self.lines_total, 1) if self.lines_total else None


@dataclass
class Kernel:
    """A kernel the port leaves for manual work: a .cu/.cuh file or a Triton kernel (a manual finding of the
    ``kernels`` domain on such a file, or of a ``triton-*`` rule on a Python function), with its size."""

    path: str
    line: int
    rule: Rule
    kind: str  # "cuda" (a .cu/.cuh file) or "triton" (a Triton kernel)
    name: str  # the __global__ kernels of a .cu file, the function of a Triton kernel
    lines: int | None  # lines of the kernel function, or of the whole .cu file
    kernels: int  # __global__ kernels in a .cu file; 1 for a Triton kernel
    message: str
    finding: Finding


@dataclass
class Risk:
    """A rule the scan found: the pattern and replacement of its documentation (what it looks for in general),
    and the project's own first occurrence (``location``, its ``code``, what the port makes of it: ``becomes``)."""

    rule: Rule
    pattern: str
    replacement: str
    count: int
    location: str = ""  # "path:line" of the first finding
    code: str = ""  # the scanned line there
    becomes: str = ""  # its new line, "manual (TODO)" for manual work

    @property
    def risk(self) -> str:
        return {Confidence.HIGH: "low", Confidence.MEDIUM: "medium", Confidence.LOW: "high"}[self.rule.confidence]


@dataclass
class Report:
    """The findings and edits are built at once; the parts only the md and json formats show (dependency matrix,
    kernels, risks, effort and verdict) when first asked for, so ``--format github`` or ``csv`` never pays for
    them."""

    version: str
    files: list[FileResult]
    placed: list[Placed]
    edits: list[ReportEdit]
    stats: list[FileStats]  # files with findings or changes
    total: FileStats  # every file checked
    rules: list[Rule]  # the whole catalogue (SARIF lists every rule)
    skipped: list[Skipped] = field(default_factory=list)  # files left out by ignore rules or excludes
    target: str = ""  # the torch-npu release the port targets
    loader: Callable[[], dict[str, bytes]] | None = field(default=None, repr=False)  # the scanned bytes, by path
    cache_folder: Path | None = None  # where the dependency matrix keeps the imports of each module
    npu_support: str = ""  # the file that shows the project supports the NPU already (RunResult.npu_support), or ""

    @cached_property
    def texts(self) -> dict[str, bytes]:
        """The bytes of each file as scanned (read when first needed)."""
        return self.loader() if self.loader is not None else {}

    @property
    def errors(self) -> list[FileResult]:
        return [f for f in self.files if f.error]

    @property
    def changed(self) -> list[FileResult]:
        return [f for f in self.files if f.changed]

    @cached_property
    def dependencies(self) -> list[Dependency]:
        return find_dependencies(self.files, self.texts, self.cache_folder)

    @cached_property
    def kernels(self) -> list[Kernel]:
        return _kernels(self.placed, self.texts)

    @cached_property
    def risks(self) -> list[Risk]:
        return _risks(self.placed, self.texts)

    @cached_property
    def performance(self) -> Performance:
        """What the port made faster, and what it left with its expected effect (reports/performance.py)."""
        return performance(p.finding for p in self.placed)

    @cached_property
    def effort(self) -> list[effort_model.EffortLine]:
        return effort_model.effort(self.effort_counts)

    @cached_property
    def effort_counts(self) -> dict[str, int]:
        return _effort_counts(self.placed, self.kernels, self.dependencies, bool(self.npu_support))

    @cached_property
    def _verdict(self) -> tuple[str, list[str]]:
        return effort_model.feasibility(self.effort_counts, self.effort)

    @property
    def feasibility(self) -> str:
        return self._verdict[0]

    @property
    def reasons(self) -> list[str]:
        return self._verdict[1]

    @property
    def hours(self) -> float:
        return round(sum(line.hours for line in self.effort), 1)


# --- reading files ---------------------------------------------------------------------------------------------


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _line_count(data: bytes) -> int:
    return len(split_lines(data))


def _place(file: FileResult, by_finding: dict[int, ReportEdit], lines_total: int) -> list[Placed]:
    placed = []
    for finding in file.findings:
        line = scanned_line(file, finding)
        if lines_total:
            line = min(max(1, line), lines_total)
        placed.append(Placed(file.path, finding, line, by_finding.get(id(finding))))
    return placed


# --- kernels ---------------------------------------------------------------------------------------------------


def _function_at(text: str, line: int) -> tuple[str, int] | None:
    """(name, lines) of the innermost function whose decorators-to-end span holds ``line``, else of the first
    function that starts after it (a TODO sits above the decorators)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    best: tuple[int, str, int] | None = None
    following: tuple[int, str, int] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        size = end - start + 1
        if start <= line <= end and (best is None or size < best[0]):
            best = (size, node.name, size)
        elif start > line and (following is None or start < following[0]):
            following = (start, node.name, size)
    chosen = best or following
    return (chosen[1], chosen[2]) if chosen else None


def _kernels(placed: list[Placed], texts: Mapping[str, bytes]) -> list[Kernel]:
    out = []
    for p in placed:
        if DOMAINS[p.rule.id[:4]] != "kernels" or p.role != "manual":
            continue
        data = texts.get(p.path)
        text = data.decode("utf-8", errors="replace") if data is not None else ""
        if p.path.endswith(CUDA_SUFFIXES):
            from ascend_port.formats.cpp_source import global_kernels

            found = global_kernels(text)
            out.append(
                Kernel(
                    p.path,
                    p.line,
                    p.rule,
                    "cuda",
                    ", ".join(dict.fromkeys(n for n, _ in found)),
                    _line_count(data) if data is not None else None,
                    len(found),
                    p.finding.message,
                    p.finding,
                )
            )
            continue
        function = _function_at(text, p.line) if p.path.endswith(".py") and p.rule.name.startswith("triton") else None
        # (extension builds, CUDA-only libraries, apex, NPU500's notes on a kernel's lines: TODOs like any other)
        if function is not None and is_kernel_todo(p.rule.id, p.finding.message):
            out.append(Kernel(p.path, p.line, p.rule, "triton", *function, 1, p.finding.message, p.finding))
    return out


# --- risks -----------------------------------------------------------------------------------------------------


def _example_blocks(doc: str) -> tuple[list[str], list[str]]:
    """The lines of a rule doc's ``Before:`` and ``After:`` examples (indented blocks)."""
    blocks: dict[str, list[str]] = {"Before:": [], "After:": []}
    current: list[str] | None = None
    for line in doc.splitlines():
        if line.strip() in blocks:
            current = blocks[line.strip()]
        elif current is not None and line.strip():
            if line[:1] in " \t":
                current.append(line.strip())
            else:
                current = None
    return blocks["Before:"], blocks["After:"]


def _similar(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.6


def pattern_and_replacement(rule: Rule) -> tuple[str, str]:
    """The first line the rule's Before/After example changes, and what it becomes ("manual" for low rules).

    The examples are whole files (tests/test_rule_docs.py runs them), so their imports are context: a low rule's
    pattern is the line its own TODO marks, and an import block the port removes or replaces along with the change
    (flash-attn's import, where the helper goes) is passed over when a later change follows."""
    before, after = _example_blocks(rule.doc)
    if not rule.rewrites:
        return _marked_line(rule, before, after), "manual (TODO)"
    return _first_change(before, after) or (rule.summary, "")


def _marked_line(rule: Rule, before: list[str], after: list[str]) -> str:
    """The Before line of the statement that the TODO of a rule that does not rewrite marks in its After example."""
    code = [line for line in before if not line.startswith(("#", "//"))]
    todo = f"{TODO_PREFIX}{rule.id} "
    marked = next((after[i + 1] for i in range(len(after) - 1) if after[i].startswith(todo)), None)
    if marked is not None and code:  # the Before line of the statement the TODO marks
        return max(code, key=lambda line: difflib.SequenceMatcher(None, line, marked).ratio())
    return code[0] if code else rule.summary


def _first_change(before: list[str], after: list[str]) -> tuple[str, str] | None:
    """The first change from ``before`` to ``after`` that is not an import going with a later change: the old line
    and what it becomes; None when the example changes nothing."""
    changes = [
        op for op in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    for n, (tag, i1, i2, j1, j2) in enumerate(changes):
        if tag == "replace" and (j2 - j1 == i2 - i1 or _similar(before[i1], after[j1])):
            return before[i1], after[j1]
        if (
            tag != "insert"
            and n + 1 < len(changes)
            and all(line.startswith(("import ", "from ")) for line in before[i1:i2])
        ):
            continue  # imports that go with the change below
        # A replace here has more lines, and the first is new: an added line (`import torch_npu`), as an insert is.
        if tag in ("replace", "insert"):
            return (before[i1 - 1] if i1 else ""), f"add: {after[j1]}"
        if tag == "delete":
            return before[i1], "(removed)"
    return None


def _line_text(data: bytes | None, line: int) -> str:
    """Line ``line`` (1-based) of ``data``, stripped ("" when it is not there)."""
    if data is None:
        return ""
    lines = split_lines(data)
    return lines[line - 1].decode("utf-8", errors="replace").strip() if 0 < line <= len(lines) else ""


def _becomes(p: Placed, code: str) -> str:
    """What the port makes of the first occurrence's line ``code``: the new line of its edit most like it, with
    ``add:`` when the edit adds it after ``code`` (``import torch_npu``); "manual (TODO)" for manual work."""
    if p.role != "rewrite":
        return "manual (TODO)" if p.role == "manual" else "nothing (runs as it is)"
    if p.edit is None:
        return ""
    new = [line.strip() for line in p.edit.new_text.splitlines() if not TODO_PATTERN.match(line.strip())]
    if not new:
        return "(removed)" if p.edit.old_text else "unchanged, with a TODO"
    best = max(new, key=lambda line: difflib.SequenceMatcher(None, code, line, autojunk=False).ratio())
    old = [line.strip() for line in p.edit.old_text.splitlines()]
    return best if code in old else f"add: {best}"


def _risks(placed: list[Placed], texts: Mapping[str, bytes]) -> list[Risk]:
    """One row per rule found, with the project's own first occurrence: where, its code and what it becomes."""
    counts = Counter(p.rule for p in placed)
    first: dict[str, Placed] = {}
    for p in placed:  # (sorted by path and line)
        first.setdefault(p.rule.id, p)
    out = []
    for rule, count in counts.items():
        p = first[rule.id]
        code = _line_text(texts.get(p.path), p.line)
        out.append(Risk(rule, *pattern_and_replacement(rule), count, f"{p.path}:{p.line}", code, _becomes(p, code)))
    return sorted(out, key=lambda r: (r.rule.confidence, r.rule.id))


# --- the report ------------------------------------------------------------------------------------------------


_ISLAND_DOMAINS = ("device", "distributed")


def _effort_counts(
    placed: list[Placed], kernels: list[Kernel], dependencies: list[Dependency], npu_aware: bool = False
) -> dict[str, int]:
    """The effort items' counts. ``npu_aware``: the project supports the NPU already (effort.py says what counts)."""
    counts: Counter[str] = Counter()
    in_kernels = {id(kernel.finding) for kernel in kernels}
    for p in placed:
        if p.role == "rewrite":
            counts["rewrite-high" if p.rule.confidence is Confidence.HIGH else "rewrite-medium"] += 1
        elif p.role == "manual" and id(p.finding) not in in_kernels:
            # (in a project that runs on the NPU, what a device or distributed rule reports where it would rewrite
            # Python is CUDA code left outside its dispatches: the device model silences what they keep)
            if npu_aware and p.finding.rewrites and p.rule.domain in _ISLAND_DOMAINS and p.path.endswith(".py"):
                counts["island"] += 1
            elif npu_aware and p.rule.speeds_up:
                counts["fused-op"] += 1
            else:
                counts["todo"] += 1
    if npu_aware:
        counts["kernel-kept"] = sum(1 if kernel.kind == "triton" else kernel.kernels for kernel in kernels)
        counts["dependency-kept"] = sum(1 for d in dependencies if d.status in (REPLACE, UNSUPPORTED) and d.imported)
        return dict(counts)
    for kernel in kernels:
        if kernel.kind == "triton":
            counts["triton-kernel"] += 1
        elif kernel.kernels:
            counts["cuda-kernel"] += kernel.kernels
        else:
            counts["todo"] += 1  # a .cu file of device helpers only
    # Only what the code imports is manual work: a requirement alone is removed or swapped by the NPU6xx rules.
    counts["dependency-replace"] = sum(1 for d in dependencies if d.status == REPLACE and d.imported)
    counts["dependency-unsupported"] = sum(1 for d in dependencies if d.status == UNSUPPORTED and d.imported)
    return dict(counts)


def _old_bytes(file: FileResult, old: Mapping[str, bytes]) -> bytes | None:
    """The bytes of ``file`` before the port: given in ``old``, else read from disk (None when they are gone)."""
    data = old.get(file.path, old.get(str(Path(file.path).resolve())))
    if data is None:
        data = _read(file.path)
        if data is not None and file.new_bytes is not None and data == file.new_bytes:
            data = None  # already written: the old text is gone
    return data


def _file_stats(path: str, file_placed: list[Placed], edits_of_file: list[ReportEdit], lines_total: int) -> FileStats:
    """HIPIFY's block for one file: its findings as converted or left for manual work, the lines its edits change."""
    stat = FileStats(path, lines_total=lines_total)
    for p in file_placed:
        if p.role == "rewrite":
            stat.converted += 1
        elif p.role == "manual":
            stat.unconverted += 1
    stat.lines_changed = sum(e.lines_changed for e in edits_of_file)
    return stat


def build(result: RunResult, old: Mapping[str, bytes] | None = None, *, edits: bool = True) -> Report:
    """Everything the reports show, from one run. ``old`` maps a ``FileResult.path`` (or the file's absolute path)
    to its bytes before the port, for callers that have already written it; other files are read from disk.

    ``edits=False`` (the github annotations) reads no file and diffs nothing: the findings are placed from the
    port's own diffs, on the same lines as with edits, and the files are read only if a part that needs them
    (dependencies, kernels) is asked for."""
    old = old or {}
    placed: list[Placed] = []
    all_edits: list[ReportEdit] = []
    stats: list[FileStats] = []
    total = FileStats("total")
    texts: dict[str, bytes] = {}
    files = [f for f in result.files if not (f.error or f.skipped)]

    def scanned(file: FileResult) -> bytes | None:
        # (a file the port creates, the shared attention helpers, is empty before: all its lines are changed ones)
        return b"" if file.path in result.created else _old_bytes(file, old)

    def read_all() -> dict[str, bytes]:
        return {f.path: data for f in files if (data := scanned(f)) is not None}

    for file in files:
        if not edits:
            placed.extend(_place(file, {}, 0))
            continue
        data = scanned(file)
        if data is not None:
            texts[file.path] = data
        lines_total = _line_count(data) if data is not None else 0
        by_finding: dict[int, ReportEdit] = {}
        edits_of_file: list[ReportEdit] = []
        if file.new_bytes is not None and data is not None:
            edits_of_file, by_finding = file_edits(file, data)
        file_placed = _place(file, by_finding, lines_total)
        placed.extend(file_placed)
        all_edits.extend(edits_of_file)
        stat = _file_stats(file.path, file_placed, edits_of_file, lines_total)
        total.converted += stat.converted
        total.unconverted += stat.unconverted
        total.lines_total += stat.lines_total
        total.lines_changed += stat.lines_changed
        if file_placed or edits_of_file:
            stats.append(stat)
    placed.sort(key=lambda p: (p.path, p.line, p.rule.id))
    from ascend_port.run.cache import cache_root

    return Report(
        __version__,
        list(result.files),
        placed,
        all_edits,
        stats,
        total,
        [r for r in all_rules() if not r.retired],
        list(result.skipped),
        result.target,
        loader=(lambda: texts) if edits else read_all,
        cache_folder=cache_root() / "reports",
        npu_support=result.npu_support,
    )
