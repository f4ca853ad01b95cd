"""``ascend-port todos``: the TODO comments a port left in a tree, grouped by rule, with totals.

It reads the files as they are now (nothing is ported), so a TODO the user resolved by deleting the comment is
gone from the list; a later port writes it again only if the construct it is about is still there unchanged.
Python files are tokenized, so only real comments count (a string that quotes a TODO does not); other files the
tool handles (requirements, shell, YAML, ...) are read line by line.
"""

from __future__ import annotations

import io
import tokenize
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.findings import TODO_PATTERN
from ascend_port.core.sources import SourceError, decode_python
from ascend_port.port.handlers import handler_for
from ascend_port.rules.registry import get_rule
from ascend_port.run.discovery import discover
from ascend_port.run.engine import display_path


@dataclass(frozen=True)
class Todo:
    path: str
    line: int
    rule: str
    confidence: str
    text: str


@dataclass
class TodoReport:
    todos: list[Todo] = field(default_factory=list)
    files: int = 0  # files read
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)

    def by_rule(self) -> dict[str, list[Todo]]:
        groups: dict[str, list[Todo]] = defaultdict(list)
        for todo in sorted(self.todos, key=lambda t: (t.rule, t.path, t.line)):
            groups[todo.rule].append(todo)
        return dict(groups)


def _python_comments(text: str) -> Iterator[tuple[int, str]]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" in line:
            yield number, line[line.index("#") :]


def _clean(text: str) -> str:
    """The TODO's message, without what a line-based read drags along (a notebook's JSON quoting)."""
    text = text.rstrip()
    for tail in ('\\n",', '\\n"', '",', '"'):
        if text.endswith(tail):
            return text[: -len(tail)].rstrip()
    return text


def todos_in(path: Path, data: bytes) -> list[Todo]:
    """The ascend-port TODOs in one file's bytes."""
    shown = display_path(path)
    if path.suffix == ".py":
        try:
            text = decode_python(data).text
            comments: Iterable[tuple[int, str]] = list(_python_comments(text))
        except (SourceError, tokenize.TokenError, SyntaxError):
            comments = _lines(data.decode("utf-8", errors="replace"))
    else:
        comments = _lines(data.decode("utf-8", errors="replace"))
    found = []
    for line, comment in comments:
        if (match := TODO_PATTERN.search(comment)) is not None:
            found.append(Todo(shown, line, match["rule"], match["confidence"], _clean(match["text"])))
    return found


def find_todos(paths: Iterable[Path], exclude: Iterable[str] = ()) -> TodoReport:
    """Every ascend-port TODO under ``paths``, in the files the port itself would look at."""
    report = TodoReport()
    for path in discover([Path(p) for p in paths], lambda p: handler_for(p) is not None, exclude):
        try:
            data = path.read_bytes()
        except OSError as error:
            report.errors.append((display_path(path), f"cannot read: {error.strerror or error}"))
            continue
        report.files += 1
        if b"\0" in data:
            continue  # binary
        report.todos.extend(todos_in(path, data))
    return report


def _rule_title(rule_id: str) -> str:
    try:
        return f"{rule_id} {get_rule(rule_id).name}"
    except KeyError:
        return rule_id  # a rule this version does not know (an older or newer ascend-port wrote it)


def render(report: TodoReport) -> list[str]:
    """The listing: one block per rule (its TODOs as file:line [confidence] text), then the totals."""
    lines: list[str] = []
    for rule_id, todos in report.by_rule().items():
        lines.append(f"{_rule_title(rule_id)}: {len(todos)}")
        for todo in todos:
            lines.append(f"  {todo.path}:{todo.line}  [{todo.confidence}]  {todo.text}")
        lines.append("")
    count = len(report.todos)
    files = len({t.path for t in report.todos})
    confidences = Counter(t.confidence for t in report.todos)
    split = ", ".join(f"{confidences[c]} {c}" for c in ("high", "medium", "low") if confidences[c])
    lines.append(
        f"{count} TODO{'' if count == 1 else 's'} in {files} file{'' if files == 1 else 's'} "
        f"({report.files} checked)" + (f": {split}" if split else "")
    )
    return lines
