"""A changed file's edits, each with the findings it carries out, from the file's old and new bytes.

``hunks.FileChange`` gives the runs of changed lines and which run each finding belongs to. difflib merges a TODO
comment inserted above a statement with a rewrite of the line before it (one "replace" run); such a run is cut
back into the rewrite and the insertion, so that a SARIF fix for the rewrite does not carry another rule's TODO.
A run is cut only when its lines pair up exactly (the new lines without the TODO lines are as many as the old).
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
    if not finding.rule.rewrites:
        comment = todo_comment(finding.rule, finding.message).encode("utf-8", errors="replace")
        for i, part in enumerate(parts):
            if any(new_lines[j].strip() == comment for j in range(part.new_start, part.new_end)):
                return i
    line = finding.line - 1
    hits = [i for i, part in enumerate(parts) if part.old_start <= line and part.old_end > part.old_start]
    return hits[-1] if hits else 0


def file_edits(file: FileResult, old: bytes) -> tuple[list[ReportEdit], dict[int, ReportEdit]]:
    """The file's edits, and for each applied finding (by ``id``) the edit that carries it out."""
    assert file.new_bytes is not None
    change = FileChange(file.path, old, file.new_bytes, list(file.findings))
    old_lines, new_lines = change.old_lines, change.new_lines
    encoding = encoding_of(file.path, old)
    edits: list[ReportEdit] = []
    by_finding: dict[int, ReportEdit] = {}
    for index, c in enumerate(change.changes):
        parts = _split(c, old_lines, new_lines)
        owned: list[list[Finding]] = [[] for _ in parts]
        for finding in change.findings_of.get(index, []):
            owned[_owner(finding, parts, new_lines) if len(parts) > 1 else 0].append(finding)
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
