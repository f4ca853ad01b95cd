"""Unified diffs that ``git apply`` accepts: ``a/``/``b/`` paths, original line endings kept, and the
``\\ No newline at end of file`` marker where a side ends without one."""

from __future__ import annotations

import difflib
from typing import Literal

NO_NEWLINE = "\\ No newline at end of file\n"


def git_lines(text: str) -> list[str]:
    """Lines as git counts them: a line ends after ``\n`` only (a lone ``\r`` or a form feed is part of a line;
    ``str.splitlines`` would cut there and the diff would not apply)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(display_path: str, old: str, new: str, context: int = 3) -> str:
    old_lines = git_lines(old)
    new_lines = git_lines(new)
    out: list[str] = []
    for group in _Matcher(old_lines, new_lines).get_grouped_opcodes(context):
        if not out:
            out += [f"--- a/{display_path}\n", f"+++ b/{display_path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += (_line(" ", line) for line in old_lines[i1:i2])
                continue
            out += (_line("-", line) for line in old_lines[i1:i2])
            out += (_line("+", line) for line in new_lines[j1:j2])
    return "".join(out)


_Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


def line_opcodes(old_lines: list[str], new_lines: list[str]) -> list[_Opcode]:
    """difflib's opcodes from ``old_lines`` to ``new_lines``, as the diffs above pair the lines (see _Matcher)."""
    return _Matcher(old_lines, new_lines).get_opcodes()


# Lines of the shared start and end that difflib still sees: where an insertion repeats the lines around it (a
# device branch copied from the one above), difflib places it after the block it copies, as without the cut.
_MARGIN = 10


class _Matcher(difflib.SequenceMatcher):
    """difflib's matcher on the lines between those both sides start and end with (less a margin), which are
    equal: difflib compares every line with every other, and a port changes a few lines of a long file."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        head = 0
        for a, b in zip(old, new):
            if a != b:
                break
            head += 1
        tail = 0
        for a, b in zip(reversed(old[head:]), reversed(new[head:])):
            if a != b:
                break
            tail += 1
        head, tail = max(0, head - _MARGIN), max(0, tail - _MARGIN)
        super().__init__(None, old[head : len(old) - tail], new[head : len(new) - tail])
        self._shared = head, tail, len(old), len(new)

    def get_opcodes(self) -> list[_Opcode]:
        head, tail, old_size, new_size = self._shared
        codes: list[_Opcode] = [("equal", 0, head, 0, head)] if head else []
        for tag, i1, i2, j1, j2 in super().get_opcodes():
            if tag == "equal" and codes and codes[-1][0] == "equal":  # (the margin, which meets the shared start)
                codes[-1] = ("equal", 0, i2 + head, 0, j2 + head)
            else:
                codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
        if tail and codes and codes[-1][0] == "equal":  # (the margin, which meets the shared end)
            codes[-1] = ("equal", codes[-1][1], old_size, codes[-1][3], new_size)
        elif tail:
            codes.append(("equal", old_size - tail, old_size, new_size - tail, new_size))
        return codes


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: from 1, and an empty range from the line before it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _line(mark: str, line: str) -> str:
    return mark + line if line.endswith("\n") else mark + line + "\n" + NO_NEWLINE


def new_file_diff(display_path: str, new: str) -> str:
    """The diff that creates a file: ``--- /dev/null`` then ``+++ b/<path>``, as ``git apply`` expects."""
    diff = unified_diff(display_path, "", new)
    return diff.replace(f"--- a/{display_path}\n", "--- /dev/null\n", 1)
