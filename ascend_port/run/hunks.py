"""The change to one file as a list of hunks, at the granularity ``git add -p`` offers, and the bytes that result
from applying only some of them.

Lines are git's lines (split after ``\\n`` only) and are kept as bytes, so applying every hunk gives back the new
file byte for byte whatever its encoding or line endings, and applying none gives back the old one. The smallest
unit is a ``Change``: one run of changed lines with no unchanged line inside (a difflib opcode). A hunk groups the
changes that share context, exactly as a unified diff with three lines of context does; ``s`` (split) cuts a hunk
into its changes. The unified diffs written here are checked against the ``unidiff`` parser and ``git apply`` in
the tests.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ascend_port.core.findings import Finding

CONTEXT = 3
_HELPER_START = re.compile(rb"(_NPU_[A-Z_]+ = |def _npu_\w+\()")
NO_NEWLINE = b"\\ No newline at end of file\n"


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git sees them: each ends with ``\\n`` except possibly the last."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class Change:
    """Old lines ``[old_start, old_end)`` become new lines ``[new_start, new_end)`` (0-based)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


@dataclass(frozen=True)
class LineEdit:
    """Replace old lines ``[start, end)`` by ``lines``: what applying a hunk (or an edited hunk) does."""

    start: int
    end: int
    lines: tuple[bytes, ...]


def apply_edits(old_lines: list[bytes], edits: list[LineEdit]) -> bytes:
    out: list[bytes] = []
    pos = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < pos:
            raise ValueError(f"overlapping edits at line {edit.start + 1}")
        out.extend(old_lines[pos : edit.start])
        out.extend(edit.lines)
        pos = edit.end
    out.extend(old_lines[pos:])
    return b"".join(out)


def _range(start: int, length: int) -> str:
    """A unified-diff range as difflib and git write it (an empty range names the line before it)."""
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def _body(lines: list[tuple[bytes, bytes]]) -> bytes:
    """``(tag, line)`` pairs as hunk body lines, with git's marker after a line that has no newline."""
    out = []
    for tag, line in lines:
        out.append(tag + line if line.endswith(b"\n") else tag + line + b"\n" + NO_NEWLINE)
    return b"".join(out)


@dataclass
class FileChange:
    """One file's old and new bytes, its changes, and the findings behind them."""

    path: str  # as shown and as written in diff headers (a/<path>, b/<path>)
    old: bytes
    new: bytes
    findings: list[Finding] = field(default_factory=list)
    created: bool = False  # the file does not exist before the port (its diff starts with `--- /dev/null`)

    def __post_init__(self) -> None:
        self.old_lines = split_lines(self.old)
        self.new_lines = split_lines(self.new)
        matcher = difflib.SequenceMatcher(None, self.old_lines, self.new_lines, autojunk=False)
        changes = [Change(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
        self.changes = self._isolate_helpers(self._isolate_import(changes))
        self.findings_of = self._assign_findings()

    def _isolate_import(self, changes: list[Change]) -> list[Change]:
        """Make the added ``import torch_npu`` line a change of its own. difflib merges it with a rewrite on the
        next line (``import torch`` / ``torch.cuda.x()``) or with the import line it replaces; kept apart, that
        rewrite can be refused while the import is applied for another one."""
        lines = {f.line - 1 for f in self.findings if f.rule.line_in_new_text and f.applied}
        out: list[Change] = []
        for c in changes:
            if c.new_start in lines and c.new_end - c.new_start > 1:
                out.append(Change(c.old_start, c.old_start, c.new_start, c.new_start + 1))
                out.append(Change(c.old_start, c.old_end, c.new_start + 1, c.new_end))
            elif c.new_end - 1 in lines and (c.new_end - c.new_start > 1 or c.old_end > c.old_start):
                # (also when the import takes the place of a removed line: the removed flash-attn import then goes
                # with the calls that stop using it, the import with every rewrite)
                out.append(Change(c.old_start, c.old_end, c.new_start, c.new_end - 1))
                out.append(Change(c.old_end, c.old_end, c.new_end - 1, c.new_end))
            else:
                out.append(c)
        return out

    def _isolate_helpers(self, changes: list[Change]) -> list[Change]:
        """Make the attention helpers the port adds (``_NPU_ATTENTION_MASKS = {}``, ``def _npu_flash_attn(``...)
        an insertion of their own. difflib merges them with the flash-attn import they replace; together, the
        review could not keep the import for a refused call while an accepted one pulls the helpers in."""
        out: list[Change] = []
        for c in changes:
            start = next((j for j in range(c.new_start, c.new_end) if _HELPER_START.match(self.new_lines[j])), None)
            if start is not None:
                while start > c.new_start and not self.new_lines[start - 1].strip():
                    start -= 1  # the blank lines above the helpers go with them
            if start is not None and c.old_end > c.old_start:  # (the old lines: then a removal of their own)
                out.append(Change(c.old_start, c.old_end, c.new_start, start))
                out.append(Change(c.old_end, c.old_end, start, c.new_end))
            else:
                out.append(c)
        return out

    def groups(self, context: int = CONTEXT) -> list[tuple[int, ...]]:
        """Indices of the changes in each hunk: changes at most ``2 * context`` unchanged lines apart share one."""
        groups: list[list[int]] = []
        for i, change in enumerate(self.changes):
            if groups and change.old_start - self.changes[groups[-1][-1]].old_end <= 2 * context:
                groups[-1].append(i)
            else:
                groups.append([i])
        return [tuple(g) for g in groups]

    def _assign_findings(self) -> dict[int, list[Finding]]:
        """Which change each finding explains, so a hunk header lists only its own rules. A rewrite changes its
        own line and a TODO is inserted right above the statement it is about: the change at the finding's line.
        A finding on a statement whose body changes (NPU420 on ``class RMSNorm``, its ``forward`` rewritten) has
        no change at its line: it goes to the nearest change, the one after it on a tie."""
        out: dict[int, list[Finding]] = {i: [] for i in range(len(self.changes))}
        if not self.changes:
            return out
        for finding in self.findings:
            if not finding.applied:
                continue
            line = finding.line - 1
            if finding.rule.line_in_new_text:
                hits = [i for i, c in enumerate(self.changes) if c.new_start <= line < max(c.new_end, c.new_start + 1)]
                out[hits[-1] if hits else 0].append(finding)
            else:
                out[self._nearest_change(line)].append(finding)
        return out

    def _nearest_change(self, line: int) -> int:
        """The change at old line ``line`` (0-based; an insertion is at the line it goes above), else the
        nearest one."""
        at = [i for i, c in enumerate(self.changes) if c.old_start <= line < max(c.old_end, c.old_start + 1)]
        if at:
            return at[-1]

        def distance(c: Change) -> tuple[int, int]:
            return (c.old_start - line, 0) if c.old_start > line else (line - max(c.old_end, c.old_start + 1) + 1, 1)

        return min(range(len(self.changes)), key=lambda i: distance(self.changes[i]))

    def edits(self, change_ids: tuple[int, ...]) -> list[LineEdit]:
        return [
            LineEdit(c.old_start, c.old_end, tuple(self.new_lines[c.new_start : c.new_end]))
            for c in (self.changes[i] for i in change_ids)
        ]

    def hunk_lines(
        self,
        change_ids: tuple[int, ...],
        context: int = CONTEXT,
    ) -> tuple[int, int, list[tuple[bytes, bytes]]]:
        """The old-side start of the hunk with its context, the new-side start, and its ``(tag, line)`` lines."""
        changes = [self.changes[i] for i in change_ids]
        first, last = changes[0], changes[-1]
        start = max(0, first.old_start - context)
        end = min(len(self.old_lines), last.old_end + context)
        lines: list[tuple[bytes, bytes]] = [(b" ", line) for line in self.old_lines[start : first.old_start]]
        for i, change in enumerate(changes):
            if i:
                lines.extend((b" ", line) for line in self.old_lines[changes[i - 1].old_end : change.old_start])
            lines.extend((b"-", line) for line in self.old_lines[change.old_start : change.old_end])
            lines.extend((b"+", line) for line in self.new_lines[change.new_start : change.new_end])
        lines.extend((b" ", line) for line in self.old_lines[last.old_end : end])
        return start, first.new_start - (first.old_start - start), lines

    def hunk_text(self, change_ids: tuple[int, ...], context: int = CONTEXT) -> bytes:
        """One hunk in unified format, header included."""
        old_start, new_start, lines = self.hunk_lines(change_ids, context)
        old_len = sum(1 for tag, _ in lines if tag != b"+")
        new_len = sum(1 for tag, _ in lines if tag != b"-")
        header = f"@@ -{_range(old_start, old_len)} +{_range(new_start, new_len)} @@\n".encode()
        return header + _body(lines)

    def diff(self, context: int = CONTEXT) -> bytes:
        """The whole file's unified diff (empty when nothing changes), paths as ``git apply`` expects."""
        if not self.changes:
            return b""
        # A file the port creates (the shared attention helpers): `git apply` creates a file from `--- /dev/null`.
        old = "/dev/null" if self.created else f"a/{self.path}"
        header = f"--- {old}\n+++ b/{self.path}\n".encode("utf-8", "surrogateescape")
        return header + b"".join(self.hunk_text(group, context) for group in self.groups(context))


def diff_bytes(path: str, old: bytes, new: bytes, created: bool = False) -> bytes:
    return FileChange(path, old, new, created=created).diff()
