"""Unified diffs that ``git apply`` accepts: ``a/``/``b/`` paths, original line endings kept, and the
``\\ No newline at end of file`` marker where a side ends without one."""

from __future__ import annotations

import difflib

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
    diff = difflib.unified_diff(old_lines, new_lines, f"a/{display_path}", f"b/{display_path}", n=context)
    for number, line in enumerate(diff):
        if number < 2:  # the ---/+++ header (a removed line may start with "--" too)
            out.append(line.rstrip("\r\n") + "\n")
            continue
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def new_file_diff(display_path: str, new: str) -> str:
    """The diff that creates a file: ``--- /dev/null`` then ``+++ b/<path>``, as ``git apply`` expects."""
    diff = unified_diff(display_path, "", new)
    return diff.replace(f"--- a/{display_path}\n", "--- /dev/null\n", 1)
