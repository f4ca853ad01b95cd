"""Span edits on the original text: the non-Python handlers never re-serialise a file; they replace the bytes they
change and keep every other byte (comments, quoting, indentation, line endings)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from ascend_port.core.catalogue import Rule
from ascend_port.core.findings import Finding, todo_comment
from ascend_port.core.options import DEFAULT, PortOptions
from ascend_port.core.porting import PortError
from ascend_port.core.selection import Selection
from ascend_port.core.suppression import Suppressions, from_lines


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``new``; ``start == end`` inserts."""

    start: int
    end: int
    new: str


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; insertions at one offset keep their order. Overlaps are an internal error."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))  # stable: insertions at one offset stay in order
    pieces: list[str] = []
    done = 0
    for edit in ordered:
        if edit.start < done:
            raise PortError("internal error: overlapping edits; the file is left unchanged")
        pieces.append(text[done : edit.start])
        pieces.append(edit.new)
        done = edit.end
    pieces.append(text[done:])
    return "".join(pieces)


def newline_of(text: str) -> str:
    """The file's line ending (of its first line), for the lines a handler adds."""
    index = text.find("\n")
    if index > 0 and text[index - 1] == "\r":
        return "\r\n"
    return "\n"


class LineIndex:
    """Offsets <-> 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def line_start(self, offset: int) -> int:
        return self.starts[self.line_of(offset) - 1]

    def line_end(self, offset: int) -> int:
        """Offset of the line's newline (``\\r\\n`` or ``\\n``), or the end of the text."""
        index = self.text.find("\n", offset)
        if index < 0:
            return len(self.text)
        return index - 1 if index > 0 and self.text[index - 1] == "\r" else index

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line ending."""
        start = self.starts[line - 1]
        return self.text[start : self.line_end(start)]

    def indent_at(self, offset: int) -> str:
        start = self.line_start(offset)
        end = start
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return self.text[start:end]


def comment_lines_above(lines: LineIndex, line_start: int, prefix: str = "#") -> list[str]:
    """The block of comment lines right above the line starting at ``line_start`` (stripped)."""
    found: list[str] = []
    line = lines.line_of(line_start) - 1
    while line >= 1:
        stripped = lines.line_text(line).strip()
        if not stripped.startswith(prefix):
            break
        found.append(stripped)
        line -= 1
    return found


@dataclass
class TextPort:
    """What a text handler collects while reading a file: edits, findings, and TODO comments to insert."""

    text: str
    selection: Selection
    options: PortOptions = DEFAULT
    edits: list[Edit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    _lines: LineIndex | None = None
    _todos: set[tuple[int, str]] = field(default_factory=set)
    _suppressions: Suppressions | None = None

    @property
    def suppressions(self) -> Suppressions:
        """The file's `# ascend-port: ignore[...]` comments (core/suppression.py)."""
        if self._suppressions is None:
            self._suppressions = from_lines(self.text)
        return self._suppressions

    def _suppressed(self, rule: Rule, offset: int) -> bool:
        found = self.suppressions
        return bool(found) and found.suppresses(rule.id, self.lines.line_of(offset))

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def enabled(self, rule: Rule) -> bool:
        return self.selection.enabled(rule)

    def fix(self, rule: Rule, offset: int, edits: Iterable[Edit], message: str) -> bool:
        """Record a rewrite at ``offset`` (for its line number); False when the rule is not enabled."""
        if not self.enabled(rule) or self._suppressed(rule, offset):
            return False
        self.edits.extend(edits)
        self.findings.append(Finding(rule, self.lines.line_of(offset), message, applied=True))
        return True

    def report(self, rule: Rule, offset: int, message: str) -> None:
        """A finding that changes nothing (the handler cannot or must not edit here)."""
        if self.enabled(rule) and not self._suppressed(rule, offset):
            self.findings.append(Finding(rule, self.lines.line_of(offset), message, applied=False))

    def todo(
        self,
        rule: Rule,
        offset: int,
        message: str,
        *,
        above: int | None = None,
        indent: str | None = None,
        prefix: str = "#",
    ) -> None:
        """Record a finding and a TODO comment line inserted above the line starting at ``above`` (default: the
        line of ``offset``), indented like that line. Never written twice, nor when already there."""
        if not self.enabled(rule) or self._suppressed(rule, offset):
            return
        self.findings.append(Finding(rule, self.lines.line_of(offset), message, applied=True, todo=True))
        line_start = self.lines.line_start(offset if above is None else above)
        comment = todo_comment(rule, message)
        if prefix != "#":
            comment = prefix + comment[1:]
        if (line_start, comment) in self._todos or comment in comment_lines_above(self.lines, line_start, prefix):
            return
        self._todos.add((line_start, comment))
        pad = self.lines.indent_at(line_start) if indent is None else indent
        self.edits.append(Edit(line_start, line_start, pad + comment + newline_of(self.text)))

    def result(self) -> str | None:
        if not self.edits:
            return None
        new_text = apply_edits(self.text, self.edits)
        return None if new_text == self.text else new_text
