"""Unified diffs that ``git apply`` accepts: ``a/``/``b/`` paths, original line endings kept, and the
``\\ No newline at end of file`` marker where a side ends without one."""

from __future__ import annotations

import difflib

NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(display_path: str, old: str, new: str, context: int = 3) -> str:
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    out: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, f"a/{display_path}", f"b/{display_path}", n=context):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\r\n") + "\n")
            continue
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)
