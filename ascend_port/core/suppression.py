"""Per-line suppression, like ruff's ``# noqa: E501``: ``# ascend-port: ignore[NPU104]`` on a line suppresses those
rules there (their findings are not reported, and the code they would change stays as it is); a bare
``# ascend-port: ignore`` suppresses every rule on the line. IDs are comma-separated and may be prefixes (``NPU1``),
matched as ``--select``/``--ignore`` match. ``# ascend-port: ignore-file[NPU1]`` (or bare) among the comment lines
at the top of a file suppresses the rules in the whole file.

One parser for every format that uses ``#`` comments: Python (where a comment on any line of a statement covers
the whole statement: ``spread``), requirements, shell scripts, YAML, Dockerfiles. The rules ask through
``PortContext.suppressed`` (python/transformer.py) and ``TextPort`` (formats/textedit.py).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from ascend_port.core.selection import matches, parse_patterns, unknown_patterns

MARKER = "ascend-port:"
_COMMENT = re.compile(r"#\s*ascend-port:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<ids>[^\]]*)\])?", re.I)
ALL: frozenset[str] = frozenset({"ALL"})


def _patterns(ids: str | None) -> frozenset[str]:
    found = frozenset(parse_patterns([ids] if ids is not None else ()))
    return found or ALL  # (a bare ignore, and `ignore[]`)


@dataclass
class Suppressions:
    """The suppression comments of one file: rule patterns by 1-based line, and for the whole file."""

    lines: dict[int, frozenset[str]] = field(default_factory=dict)
    whole_file: frozenset[str] = frozenset()
    # Every comment as written: (line, patterns), for the warning about IDs that name no rule.
    comments: list[tuple[int, frozenset[str]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.lines or self.whole_file)

    def suppresses(self, rule_id: str, line: int | None = None) -> bool:
        """Is ``rule_id`` suppressed on ``line`` (None: in the whole file only)?"""
        if self.whole_file and matches(rule_id, self.whole_file):
            return True
        patterns = self.lines.get(line) if line is not None else None
        return patterns is not None and matches(rule_id, patterns)

    def unknown(self, known: Iterable[str]) -> list[tuple[int, str]]:
        """(line, pattern) of each ID in a comment that matches no rule of ``known``."""
        known = list(known)
        return [(line, p) for line, patterns in self.comments for p in unknown_patterns(sorted(patterns), known)]


def _add(found: Suppressions, line: int, kind: str, ids: str | None, head: bool) -> None:
    patterns = _patterns(ids)
    found.comments.append((line, patterns))
    if kind.lower() == "ignore-file":
        if head:  # (further down, like a noqa in the middle of a file, it would surprise: it is ignored)
            found.whole_file |= patterns
    else:
        found.lines[line] = found.lines.get(line, frozenset()) | patterns


def from_lines(text: str) -> Suppressions:
    """The suppressions of a text format with ``#`` comments: each comment covers its own line, and the lines
    continued into it or from it with a final backslash (a shell command, a requirement with its hashes); a comment
    on a line of its own covers the next line too (a Dockerfile has no comment after an instruction). The
    file-level comment counts among the comment and blank lines that start the file."""
    found = Suppressions()
    if MARKER not in text:
        return found
    head = True
    group: list[int] = []  # the physical lines of the logical line so far
    above: frozenset[str] = frozenset()  # a comment line's patterns, for the next line
    for number, line in enumerate(text.splitlines(), 1):
        group.append(number)
        stripped = line.strip()
        if head and stripped and not stripped.startswith("#"):
            head = False
        for m in _COMMENT.finditer(line) if MARKER in line else ():
            _add(found, number, m.group("kind"), m.group("ids"), head)
        if stripped.startswith("#"):
            above |= found.lines.get(number, frozenset())
        elif stripped and above:
            found.lines[number] = found.lines.get(number, frozenset()) | above
            above = frozenset()
        if line.endswith("\\"):
            continue
        patterns = frozenset().union(*(found.lines.get(n, frozenset()) for n in group))
        if patterns and len(group) > 1:
            found.lines.update((n, patterns) for n in group)
        group = []
    return found


def from_python(text: str, tree: ast.Module | None = None) -> Suppressions:
    """The suppressions of a Python module: comments only (never a string that spells one), and a comment on any
    line of a statement covers every line of it (a multi-line call suppressed on its last line); on the header of a
    compound statement (``with ...:``), the header's lines, not its body. ``tree``: the module (or its head) as
    ``ast`` read it, for the statements' lines; without it, each comment covers its own line."""
    found = Suppressions()
    if MARKER not in text:
        return found
    first_code: int | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and MARKER in token.string:
                for m in _COMMENT.finditer(token.string):
                    head = first_code is None or token.start[0] < first_code
                    _add(found, token.start[0], m.group("kind"), m.group("ids"), head)
            elif first_code is None and token.type not in _NOT_CODE:
                first_code = token.start[0]
    except (tokenize.TokenError, SyntaxError):
        return from_lines(text)  # (a source tokenize cannot read: every comment-like text counts)
    if found.lines and tree is not None:
        spread(found, tree)
    return found


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING, tokenize.INDENT, tokenize.DEDENT}


def spread(found: Suppressions, tree: ast.Module) -> None:
    """Extend each line's patterns to the lines of the innermost statement (or compound statement's header) that
    holds the line."""
    spans: dict[int, tuple[int, int]] = {}  # comment line -> the innermost span that holds it
    wanted = set(found.lines)
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first, last = _own_span(node)
        for line in wanted:
            if first <= line <= last:
                known = spans.get(line)
                if known is None or last - first <= known[1] - known[0]:
                    spans[line] = (first, last)
    for line, (first, last) in spans.items():
        patterns = found.lines[line]
        for covered in range(first, last + 1):
            found.lines[covered] = found.lines.get(covered, frozenset()) | patterns


def _own_span(node: ast.stmt) -> tuple[int, int]:
    """The lines a statement owns: all of a simple statement's; a compound statement's header (with its
    decorators), up to the line before its body."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return first, max(node.lineno, body[0].lineno - 1)
    return first, node.end_lineno or node.lineno


def unknown_ids(data: bytes, python: bool, known: Iterable[str]) -> list[tuple[int, str]]:
    """(line, ID) of each ID in a file's suppression comments that names no rule (a typo suppresses nothing): what
    the run warns about, like ruff's RUF100. ``data``: the file's bytes (lines count the same in any ASCII-based
    encoding)."""
    if MARKER.encode() not in data:
        return []
    text = data.decode("utf-8", errors="replace")
    return (from_python(text) if python else from_lines(text)).unknown(known)
