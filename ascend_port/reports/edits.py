"""A changed file's edits, each with the findings it carries out, from the file's old and new bytes.

``hunks.FileChange`` gives the runs of changed lines and which run each finding belongs to. difflib merges a TODO
comment inserted above a statement with a rewrite of the line before it (one "replace" run); such a run is cut
back into the rewrite and the insertion, so that a SARIF fix for the rewrite does not carry another rule's TODO.
A run is cut only when its lines pair up exactly (the new lines without the TODO lines are as many as the old).

Each finding then goes to the edit that carries it out, so that no edit is left without its rule in the CSV, JSON
and SARIF: a TODO to the edit that writes its very comment (wherever difflib put it), a rewrite to the edit at its
line, or to the first one after it and before the next finding (a statement over several lines is reported at its
first line and changed further down); otherwise ``FileChange``'s choice stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_port.core.findings import TODO_PATTERN, FileResult, Finding, todo_comment
from ascend_port.run.hunks import Change, FileChange


@dataclass
class ReportEdit:
    """Old lines ``[old_start, old_end)`` (0-based) of ``path`` become ``new_text`` (``new_count`` lines)."""

    path: str
    old_start: int
    old_end: int
    old_text: str
    new_text: str
    new_count: int
    end_line: int  # SARIF end position of the deleted text: (end_line, end_column), exclusive
    end_column: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def operation(self) -> str:
        """``INSERT``/``MODIFY``/``DELETE``, as msFmkTransplt's change_list.csv names its operations."""
        if self.old_start == self.old_end:
            return "INSERT"
        return "DELETE" if not self.new_count else "MODIFY"

    @property
    def start_line(self) -> int:
        """First old line replaced; for an insertion, the line the new text goes before."""
        return self.old_start + 1

    @property
    def last_line(self) -> int:
        """Last old line replaced; equal to ``start_line`` for an insertion."""
        return max(self.old_end, self.old_start + 1)

    @property
    def lines_changed(self) -> int:
        return max(self.old_end - self.old_start, self.new_count)


def encoding_of(path: str, data: bytes) -> str:
    if path.endswith(".py"):
        from ascend_port.core.sources import SourceError, decode_python

        try:
            return decode_python(data).encoding
        except SourceError:
            return "utf-8"
    return "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"


def _is_todo(line: bytes) -> bool:
    return TODO_PATTERN.match(line.decode("utf-8", errors="replace").strip()) is not None


def _split(c: Change, old_lines: list[bytes], new_lines: list[bytes]) -> list[Change]:
    """``c`` cut into rewrites of paired lines and insertions of TODO comment runs (``c`` itself if they do not
    pair up)."""
    todo = [j for j in range(c.new_start, c.new_end) if _is_todo(new_lines[j])]
    rest = c.new_end - c.new_start - len(todo)
    if not todo or not rest or rest != c.old_end - c.old_start:
        return [c]
    parts: list[Change] = []
    o, j = c.old_start, c.new_start
    while j < c.new_end:
        start_o, start_j = o, j
        kind = _is_todo(new_lines[j])
        while j < c.new_end and _is_todo(new_lines[j]) == kind:
            o, j = (o, j + 1) if kind else (o + 1, j + 1)
        if kind or old_lines[start_o:o] != new_lines[start_j:j]:
            parts.append(Change(start_o, o, start_j, j))
    return parts


def _owner(finding: Finding, parts: list[Change], new_lines: list[bytes]) -> int:
    """The part of a cut run that carries out ``finding``: its TODO line, else the part holding its line."""
    if not finding.rewrites:
        comment = todo_comment(finding.rule, finding.message).encode("utf-8", errors="replace")
        for i, part in enumerate(parts):
            if any(new_lines[j].strip() == comment for j in range(part.new_start, part.new_end)):
                return i
    line = finding.line - 1
    hits = [i for i, part in enumerate(parts) if part.old_start <= line and part.old_end > part.old_start]
    return hits[-1] if hits else 0


def _todo_parts(parts: list[Change], new_lines: list[bytes]) -> dict[bytes, list[int]]:
    """Each TODO comment line of the edits (stripped) and the edits that write it."""
    out: dict[bytes, list[int]] = {}
    for k, part in enumerate(parts):
        for j in range(part.new_start, part.new_end):
            if _is_todo(new_lines[j]):
                out.setdefault(new_lines[j].strip(), []).append(k)
    return out


def _todo_owner(finding: Finding, parts: list[Change], todos: dict[bytes, list[int]]) -> int | None:
    """The edit that writes the TODO comment of ``finding`` (the nearest to its line when the same comment is
    written more than once), or None. A TODO is found by its text, wherever the diff put it: a TODO inserted right
    after a rewritten line is in the run of that line, not at the finding's own line."""
    if finding.rewrites or not finding.applied:
        return None
    comment = todo_comment(finding.rule, finding.message).encode("utf-8", errors="replace").strip()
    candidates = todos.get(comment)
    if not candidates:
        return None
    line = finding.line - 1
    return min(candidates, key=lambda k: abs(parts[k].old_start - line))


def _statement_change(finding: Finding, changes: list[Change], starts: list[int]) -> int | None:
    """The change that carries out a rewrite: the one that replaces its line, else the first one from its line on
    and before the next finding's line (a statement over several lines is reported at its first line and changed
    further down: ``torch.ones(\n 2,\n device="cuda",\n)``). An insertion above the line (``import torch_npu``)
    is another rule's. None when neither is there (``FileChange``'s choice stands)."""
    if not finding.rewrites or finding.rule.line_in_new_text:
        return None
    line = finding.line - 1
    for i, c in enumerate(changes):
        if c.old_start <= line < c.old_end:
            return i
    following = next((s for s in starts if s > line), None)
    for i, c in enumerate(changes):
        if c.old_start > line:
            return i if following is None or c.old_start < following else None
    return None


def file_edits(file: FileResult, old: bytes) -> tuple[list[ReportEdit], dict[int, ReportEdit]]:
    """The file's edits, and for each applied finding (by ``id``) the edit that carries it out."""
    assert file.new_bytes is not None
    change = FileChange(file.path, old, file.new_bytes, list(file.findings))
    old_lines, new_lines = change.old_lines, change.new_lines
    encoding = encoding_of(file.path, old)
    parts: list[Change] = []
    cut = [_split(c, old_lines, new_lines) for c in change.changes]
    first = [0]
    for pieces in cut:
        first.append(first[-1] + len(pieces))
        parts.extend(pieces)
    owned: list[list[Finding]] = [[] for _ in parts]
    todos = _todo_parts(parts, new_lines)
    starts = sorted({f.line - 1 for f in file.findings})
    for index in range(len(cut)):
        for finding in change.findings_of.get(index, []):
            k = _todo_owner(finding, parts, todos)
            if k is None:
                at = _statement_change(finding, change.changes, starts)
                at = index if at is None else at
                k = first[at] + (_owner(finding, cut[at], new_lines) if len(cut[at]) > 1 else 0)
            owned[k].append(finding)
    edits: list[ReportEdit] = []
    by_finding: dict[int, ReportEdit] = {}
    for part, findings in zip(parts, owned):
        end_line, end_column = part.old_end + 1, 1
        if part.old_end == len(old_lines) and part.old_end and not old_lines[-1].endswith(b"\n"):
            last = old_lines[-1].decode(encoding, errors="replace").lstrip("\ufeff")
            end_line, end_column = part.old_end, len(last) + 1
        edit = ReportEdit(
            file.path,
            part.old_start,
            part.old_end,
            b"".join(old_lines[part.old_start : part.old_end]).decode(encoding, errors="replace"),
            b"".join(new_lines[part.new_start : part.new_end]).decode(encoding, errors="replace"),
            part.new_end - part.new_start,
            end_line,
            end_column,
            findings,
        )
        edits.append(edit)
        for finding in findings:
            by_finding[id(finding)] = edit
    return edits, by_finding
