"""The unified diffs of the dry run and the reports (core/diffing.py): they give the new file from the old one, show
full context, and are difflib's where the change is unambiguous."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff import PatchSet

from ascend_port.core.diffing import NO_NEWLINE, git_lines, unified_diff

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "x = 1\n", "\n", "  y\r\n"]), max_size=40)
LAST = st.sampled_from(["", "z", "a\n"])


def _applied(old: str, diff: str) -> str:
    """``old`` with ``diff`` applied, read as ``patch`` reads it: each hunk's context and removed lines must be the
    old file's, and a ``\\ No newline`` line takes the newline off the line above it."""
    old_lines = git_lines(old)
    lines = diff.splitlines(keepends=True)[2:]
    out: list[str] = []
    at = 0
    for index, line in enumerate(lines):
        if line == NO_NEWLINE:
            continue
        if line.startswith("@@ "):
            start = int(line.split()[1].split(",")[0][1:])
            length = int(line.split()[1].split(",")[1]) if "," in line.split()[1] else 1
            start = start - 1 if length else start
            out += old_lines[at:start]
            at = start
            continue
        text = line[1:] if index + 1 == len(lines) or lines[index + 1] != NO_NEWLINE else line[1:-1]
        if line[0] in " -":
            assert old_lines[at] == text
            at += 1
        if line[0] in " +":
            out.append(text)
    return "".join(out + old_lines[at:])


@settings(max_examples=400, deadline=None)
@given(LINES, LAST, LINES, LAST)
def test_the_diff_gives_the_new_text(old_lines: list[str], old_last: str, new_lines: list[str], new_last: str) -> None:
    old, new = "".join(old_lines) + old_last, "".join(new_lines) + new_last
    diff = unified_diff("f.py", old, new)
    assert (diff == "") == (old == new)
    assert _applied(old, diff) == new
    for hunk in PatchSet(diff.replace(NO_NEWLINE, ""))[0] if diff else []:
        lines = list(hunk)
        leading = next(i for i, line in enumerate(lines) if not line.is_context)
        trailing = next(i for i, line in enumerate(reversed(lines)) if not line.is_context)
        start = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        # three lines of context on each side, fewer only at either end of the file
        assert leading == 3 or start == 0
        assert trailing == 3 or start + hunk.source_length == len(git_lines(old))


def test_a_change_in_a_long_file_is_difflibs_diff_with_full_context() -> None:
    old = "".join(f"line {i}\n" for i in range(500))
    new_lines = git_lines(old)
    new_lines[2] = "changed 2\n"
    new_lines[250:252] = ["inserted\n"]
    new_lines[-1] = "last changed"
    new = "".join(new_lines)
    ours = unified_diff("f.py", old, new)
    theirs = "".join(difflib.unified_diff(git_lines(old), new_lines, "a/f.py", "b/f.py"))
    assert ours == theirs.replace("+last changed", "+last changed\n" + NO_NEWLINE.rstrip("\n")) + "\n"
    assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in PatchSet(ours)[0]] == [
        (1, 6, 1, 6),
        (248, 8, 248, 7),
        (497, 4, 496, 4),
    ]


def test_a_repeated_block_is_one_insertion_with_full_context() -> None:
    """An insertion that repeats the lines around it (a device branch copied from the one above) can be shown in
    several places: wherever it is, it is one run of added lines with three lines of context on each side (the
    lines both sides start and end with must not eat the hunk's context)."""
    head = "".join(f"a{i}\n" for i in range(200))
    branch = "    with device(d):\n        yield\n        return\n"
    tail = "".join(f"b{i}\n" for i in range(200))
    old = head + "if cuda:\n" + branch + "if xpu:\n" + tail
    new = head + "if cuda:\n" + branch + "elif npu:\n" + branch + "if xpu:\n" + tail
    body = unified_diff("f.py", old, new).splitlines()[3:]
    assert [line[0] for line in body] == list("   ++++   ")
    assert _applied(old, unified_diff("f.py", old, new)) == new
