"""Which parts of a module to parse: the statements that contain a trigger, as small as each transformer allows.

Each trigger's scope (python/scopes.py) picks, among the statements that enclose a match, the one to parse: the
innermost statement, the enclosing function or class, the whole top-level statement, or none. An indented
statement is parsed inside a one-line ``if 1:`` wrapper, so its text and indentation stay exactly as they are.
Parsing statements instead of files is what makes a run over a million lines fast: most of a module never reaches
LibCST.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

from ascend_port.core.sources import line_offsets, python_lines
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import Scope, statement

WRAPPER = "if 1:"


@dataclass(frozen=True)
class Chunk:
    first: int  # 1-based, inclusive; includes the comment lines right above the statement
    last: int
    top: tuple[int, int]  # the top-level statement span that contains it (the fallback if it will not parse)
    # the owners of the matches it holds (port/python.py: the transformers that may change it)
    owners: frozenset[Hashable] = field(default=frozenset(), compare=False)

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
    head = lines[start.lineno - 1].encode("utf-8")[: start.col_offset].strip()
    if head not in ((b"@",) if decorators else (b"",)):
        return False
    if lines[start.lineno - 1].lstrip().startswith("elif"):
        return False  # an `elif` is an If in the AST but not a statement of its own
    tail = lines[(node.end_lineno or node.lineno) - 1].encode("utf-8")[node.end_col_offset or 0 :].strip()
    return not tail or tail.startswith(b"#")


def _with_comments_above(first: int, floor: int, lines: Sequence[str]) -> int:
    """Extend a span upward over the comment lines right above it (a TODO from an earlier run lives there)."""
    while first - 1 > floor and lines[first - 2].lstrip().startswith("#"):
        first -= 1
    return first


def _enclosing(
    stmts: Sequence[ast.stmt],
    line: int,
    lines: Sequence[str],
    floor: int,
) -> list[tuple[ast.stmt, tuple[int, int] | None]]:
    """The statements that contain ``line``, outermost first, each with its span (comments above included) or None
    when it cannot be parsed on its own: an `elif`, a statement that shares a line with another (its chunk is then
    its parent)."""
    for i, node in enumerate(stmts):
        first, last = _first_line(node), node.end_lineno or node.lineno
        if not first <= line <= last:
            continue
        alone = _alone_on_its_lines(node, lines) and not (i + 1 < len(stmts) and _first_line(stmts[i + 1]) == last)
        prev_end = stmts[i - 1].end_lineno or 0 if i else floor
        path = [(node, (_with_comments_above(first, max(floor, prev_end), lines), last) if alone else None)]
        for block in _blocks(node):
            if _first_line(block[0]) <= line <= (block[-1].end_lineno or 0) and _first_line(block[0]) > node.lineno:
                # floor: the compound statement's first line, so the comments above the block's first statement
                # (a TODO from an earlier run) are part of its chunk and the TODO is seen, not written twice
                path += _enclosing(block, line, lines, floor=first)
                break
        return path
    return []


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


def hot_chunks(
    lines: Sequence[str], tree: ast.Module, matches: Sequence[tuple[int, Scope, Hashable]], imports: ImportIndex
) -> list[Chunk]:
    """The chunks to parse for the trigger ``matches`` (start offset, scope, owner), in order, none inside another;
    each with the owners of the matches it holds (those of the chunks inside it included)."""
    spans = top_spans(lines, tree)
    starts = [s for s, _ in spans]
    line_starts = line_offsets(lines)
    members: list[list[ast.stmt]] = [[] for _ in spans]  # the top-level statements of each span, found once
    for node in tree.body:
        j = bisect.bisect_right(starts, _first_line(node)) - 1
        if j >= 0 and (node.end_lineno or 0) <= spans[j][1]:
            members[j].append(node)
    found: dict[Chunk, set[Hashable]] = {}
    seen: dict[tuple[int, Scope], Chunk | None] = {}
    for offset, scope, owner in matches:
        line = bisect.bisect_right(line_starts, offset)
        if (line, scope) not in seen:
            i = bisect.bisect_right(starts, line) - 1
            if i < 0 or spans[i][1] < line:
                seen[line, scope] = None  # a comment or blank line between statements
                continue
            span = _span(members[i], spans[i], line, offset - line_starts[line - 1], lines, scope, imports)
            seen[line, scope] = Chunk(*span, top=spans[i]) if span is not None else None
        chunk = seen[line, scope]
        if chunk is not None:
            found.setdefault(chunk, set()).add(owner)
    chunks: list[Chunk] = []
    owners: list[set[Hashable]] = []
    for chunk in sorted(found, key=lambda c: (c.first, -c.last)):
        if chunks and chunk.first <= chunks[-1].last:
            owners[-1] |= found[chunk]  # inside the previous chunk: its owners are that chunk's too
            continue
        chunks.append(chunk)
        owners.append(set(found[chunk]))
    return [replace(chunk, owners=frozenset(held)) for chunk, held in zip(chunks, owners)]


def _span(
    members: Sequence[ast.stmt],
    top: tuple[int, int],
    line: int,
    column: int,
    lines: Sequence[str],
    scope: Scope,
    imports: ImportIndex,
) -> tuple[int, int] | None:
    """The lines the match at ``line``, ``column`` needs parsed (within the top-level span ``top``), or None."""
    if len(members) != 1:
        return top  # top-level statements that share a line are parsed together
    path = _enclosing(members, line, lines, floor=top[0] - 1)
    if not path or _inert(path[-1][0], line, column, lines):
        return None
    if scope is statement and _class_name(path[-1][0], line, column, lines):
        return None  # `class Trainer:`: a definition is no use of the name, and the statement is the whole class
    chosen = scope([node for node, _ in path], imports)
    if chosen is None:
        return None
    path[0] = (path[0][0], top)
    index = next(i for i, (node, _) in enumerate(path) if node is chosen)
    # the chosen statement, or the innermost of its parents that parses on its own (an `elif` does not, but the
    # statements in its block do)
    return next(span for _, span in reversed(path[: index + 1]) if span is not None)


def _inert(node: ast.stmt, line: int, column: int, lines: Sequence[str]) -> bool:
    """Is a match in ``node`` in text no rule rewrites: a string statement (a docstring) or the comment after a
    simple statement? (Comment lines never get here: TriggerFilter drops them.)"""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return True
    if _blocks(node) or node.end_lineno != line or node.end_col_offset is None:
        return False
    text = lines[line - 1].encode("utf-8")
    at = len(lines[line - 1][:column].encode("utf-8"))  # ast counts columns in bytes
    return at >= node.end_col_offset and text[node.end_col_offset :].lstrip().startswith(b"#")


_CLASS_KEYWORD = re.compile(r"class\s+")


def _class_name(node: ast.stmt, line: int, column: int, lines: Sequence[str]) -> bool:
    """Is the match at ``line``, ``column`` (characters) the name of the class ``node`` defines?"""
    if not isinstance(node, ast.ClassDef) or node.lineno != line:
        return False
    text = lines[line - 1]
    start = len(text.encode("utf-8")[: node.col_offset].decode("utf-8", "ignore"))  # (ast counts bytes)
    keyword = _CLASS_KEYWORD.match(text, start)
    return keyword is not None and keyword.end() <= column < keyword.end() + len(node.name)


@dataclass(frozen=True)
class Splice:
    """A ported chunk: lines ``first``..``last`` of the module become ``new_code``."""

    first: int
    last: int
    new_code: str
    body: list[ast.stmt] | None = None  # the new code's statements as ``ast`` read them, for a top-level chunk

    @property
    def added(self) -> int:
        """How many lines the port added (negative: removed)."""
        return len(python_lines(self.new_code)) - (self.last - self.first + 1)


def splice(lines: Sequence[str], splices: Sequence[Splice]) -> str:
    """The module with each (ordered, disjoint) splice in place of its lines."""
    pieces: list[str] = []
    done = 0  # lines[:done] are in pieces
    for s in splices:
        pieces += [*lines[done : s.first - 1], s.new_code]
        done = s.last
    pieces += lines[done:]
    return "".join(pieces)


def wrap(chunk_text: str) -> tuple[str, str]:
    """Make an indented chunk parseable as a module: (text to parse, prefix to strip from the result)."""
    newline = "\r\n" if chunk_text.split("\n", 1)[0].endswith("\r") else "\n"
    prefix = WRAPPER + newline
    return prefix + chunk_text, prefix
