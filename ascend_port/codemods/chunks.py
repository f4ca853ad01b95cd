"""Which parts of a module to parse: the statements that contain a trigger, as small as each transformer allows.

A transformer with ``SCOPE = "statement"`` sees the innermost statement around each trigger (an indented statement
is parsed inside a one-line ``if 1:`` wrapper, so its text and indentation stay exactly as they are); one with
``SCOPE = "top"`` sees the whole top-level statement (a class or function it must understand as a whole). Parsing
statements instead of files is what makes a run over a million lines fast: most of a module never reaches LibCST.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Sequence

from ascend_port.codemods.textedit import line_offsets

WRAPPER = "if 1:"


@dataclass(frozen=True)
class Chunk:
    first: int  # 1-based, inclusive; includes the comment lines right above the statement
    last: int
    top: tuple[int, int]  # the top-level statement span that contains it (the fallback if it will not parse)

    @property
    def nested(self) -> bool:
        return self.top != (self.first, self.last)


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(node, "handlers", ())]
    blocks += [c.body for c in getattr(node, "cases", ())]
    return [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _alone_on_its_lines(node: ast.stmt, lines: Sequence[str]) -> bool:
    """True when nothing but indentation precedes the statement and nothing but a comment follows it."""
    decorators = getattr(node, "decorator_list", ())
    start = decorators[0] if decorators else node
    head = lines[start.lineno - 1].encode("utf-8")[:start.col_offset].strip()
    if head not in ((b"@",) if decorators else (b"",)):
        return False
    if lines[start.lineno - 1].lstrip().startswith("elif"):
        return False  # an `elif` is an If in the AST but not a statement of its own
    tail = lines[(node.end_lineno or node.lineno) - 1].encode("utf-8")[node.end_col_offset or 0:].strip()
    return not tail or tail.startswith(b"#")


def _with_comments_above(first: int, floor: int, lines: Sequence[str]) -> int:
    """Extend a span upward over the comment lines right above it (a TODO from an earlier run lives there)."""
    while first - 1 > floor and lines[first - 2].lstrip().startswith("#"):
        first -= 1
    return first


def _innermost(stmts: list[ast.stmt], line: int, lines: Sequence[str], floor: int) -> tuple[int, int] | None:
    for i, node in enumerate(stmts):
        first, last = _first_line(node), node.end_lineno or node.lineno
        if not first <= line <= last:
            continue
        if not _alone_on_its_lines(node, lines) or (i + 1 < len(stmts) and _first_line(stmts[i + 1]) == last):
            return None
        for block in _blocks(node):
            if _first_line(block[0]) <= line <= (block[-1].end_lineno or 0) and _first_line(block[0]) > node.lineno:
                # floor: the compound statement's first line, so the comments above the block's first statement
                # (a TODO from an earlier run) are part of its chunk and the TODO is seen, not written twice
                inner = _innermost(block, line, lines, floor=first)
                if inner is not None:
                    return inner
                break
        prev_end = stmts[i - 1].end_lineno or 0 if i else floor
        return _with_comments_above(first, max(floor, prev_end), lines), last
    return None


def top_spans(lines: Sequence[str], tree: ast.Module) -> list[tuple[int, int]]:
    """Spans of the top-level statements, with comments above included and statements sharing a line merged."""
    spans: list[tuple[int, int]] = []
    for node in tree.body:
        first, last = _first_line(node), node.end_lineno or node.lineno
        first = _with_comments_above(first, spans[-1][1] if spans else 0, lines)
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    return spans


def hot_chunks(text: str, lines: Sequence[str], tree: ast.Module,
               patterns: Sequence[tuple[re.Pattern[str], str]]) -> list[Chunk]:
    """The chunks to parse, in order, none inside another."""
    spans = top_spans(lines, tree)
    starts = [s for s, _ in spans]
    line_starts = line_offsets(lines)
    members: list[list[ast.stmt]] = [[] for _ in spans]  # the top-level statements of each span, found once
    for node in tree.body:
        j = bisect.bisect_right(starts, _first_line(node)) - 1
        if j >= 0 and (node.end_lineno or 0) <= spans[j][1]:
            members[j].append(node)
    found: set[Chunk] = set()
    for pattern, scope in patterns:
        seen_lines: set[int] = set()
        for match in pattern.finditer(text):
            line = bisect.bisect_right(line_starts, match.start())
            if line in seen_lines:
                continue
            seen_lines.add(line)
            i = bisect.bisect_right(starts, line) - 1
            if i < 0 or spans[i][1] < line:
                continue  # a comment or blank line between statements
            top = spans[i]
            span = None
            if scope == "statement":
                nodes = members[i]
                span = _innermost(nodes, line, lines, floor=top[0] - 1) if len(nodes) == 1 else None
            found.add(Chunk(*(span or top), top=top))
    chunks: list[Chunk] = []
    for chunk in sorted(found, key=lambda c: (c.first, -c.last)):
        if chunks and chunk.first <= chunks[-1].last:
            continue  # inside the previous chunk
        chunks.append(chunk)
    return chunks


def wrap(chunk_text: str) -> tuple[str, str]:
    """Make an indented chunk parseable as a module: (text to parse, prefix to strip from the result)."""
    newline = "\r\n" if chunk_text.split("\n", 1)[0].endswith("\r") else "\n"
    prefix = WRAPPER + newline
    return prefix + chunk_text, prefix
