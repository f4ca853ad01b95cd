"""Hunks: every diff the tool writes is the one difflib, unidiff and git agree on, and applying all hunks or none
gives back the new or the old file byte for byte."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff import PatchSet

from ascend_port.core.findings import Finding
from ascend_port.rules.registry import get_rule
from ascend_port.run.hunks import FileChange, apply_edits, split_lines

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "x = 1\n", "\n", "  y\r\n", "z"]), max_size=40)


def _text(lines: list[str]) -> bytes:
    # Only the last line may lack its newline.
    return "".join(
        line if line.endswith("\n") or i == len(lines) - 1 else line + "\n" for i, line in enumerate(lines)
    ).encode()


@settings(max_examples=300, deadline=None)
@given(LINES, LINES)
def test_all_hunks_give_the_new_file_and_none_the_old(old_lines: list[str], new_lines: list[str]) -> None:
    old, new = _text(old_lines), _text(new_lines)
    change = FileChange("f.py", old, new)
    every = [edit for group in change.groups() for edit in change.edits(group)]
    assert apply_edits(change.old_lines, every) == new
    assert apply_edits(change.old_lines, []) == old
    assert (not change.changes) == (old == new)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES)
def test_diff_is_difflibs_unified_diff_and_unidiff_reads_it(old_lines: list[str], new_lines: list[str]) -> None:
    old, new = _text(old_lines), _text(new_lines)
    change = FileChange("f.py", old, new)
    ours = change.diff().decode()
    if "\r" not in ours:  # str.splitlines would also split at a lone CR; git (and we) do not
        a, b = old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True)
        theirs = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in difflib.unified_diff(a, b, "a/f.py", "b/f.py")
        )
        assert ours == theirs
    if ours:
        patch = PatchSet(ours)
        assert len(patch[0]) == len(change.groups())
        assert patch[0].added == sum(c.new_end - c.new_start for c in change.changes)
        assert patch[0].removed == sum(c.old_end - c.old_start for c in change.changes)


def test_diff_against_unidiff_and_git_apply(tmp_path: Path) -> None:
    old = b"".join(f"line {i}\n".encode() for i in range(40)) + b"last"
    new_lines = split_lines(old)
    new_lines[2] = b"changed 2\n"
    new_lines[4:5] = []
    new_lines[20:20] = [b"inserted\n", b"inserted again\n"]
    new_lines[-1] = b"last changed"
    new = b"".join(new_lines)
    change = FileChange("sub dir/f.py", old, new)
    assert len(change.groups()) == 3
    patch = PatchSet(change.diff().decode())
    assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in patch[0]] == [
        (1, 8, 1, 7),
        (19, 6, 18, 8),
        (38, 4, 39, 4),
    ]
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir/f.py").write_bytes(old)
    (tmp_path / "p.diff").write_bytes(change.diff())
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "sub dir/f.py").read_bytes() == new


def test_split_and_partial_application() -> None:
    old = b"a\nb\nc\nd\ne\n"
    new = b"A\nb\nC\nd\ne\nf\n"
    change = FileChange("f.py", old, new)
    assert change.groups() == [(0, 1, 2)]  # one hunk of three changes
    assert apply_edits(change.old_lines, change.edits((1,))) == b"a\nb\nC\nd\ne\n"
    assert apply_edits(change.old_lines, change.edits((0, 2))) == b"A\nb\nc\nd\ne\nf\n"


def test_import_line_is_its_own_change() -> None:
    """difflib merges ``+import torch_npu`` with a rewrite of the next line; the import is kept apart so the
    rewrite can be refused while the import is applied."""
    old = b"import torch\ntorch.cuda.synchronize()\n"
    new = b"import torch\nimport torch_npu\ntorch.npu.synchronize()\n"
    findings = [
        Finding(get_rule("NPU100"), 2, "import torch_npu added", True),
        Finding(get_rule("NPU106"), 2, "torch.cuda.synchronize -> torch.npu.synchronize", True),
    ]
    change = FileChange("f.py", old, new, findings)
    assert len(change.changes) == 2
    assert (
        apply_edits(change.old_lines, change.edits((0,)))
        == b"import torch\nimport torch_npu\ntorch.cuda.synchronize()\n"
    )
    assert [f.rule.id for f in change.findings_of[0]] == ["NPU100"]
    assert [f.rule.id for f in change.findings_of[1]] == ["NPU106"]


def test_crlf_and_missing_final_newline_are_kept() -> None:
    old = b"x = 1\r\ny = 'cuda'\r\nz = 3"
    new = b"x = 1\r\ny = 'npu'\r\nz = 3"
    change = FileChange("f.py", old, new)
    assert apply_edits(change.old_lines, change.edits(change.groups()[0])) == new
    assert change.diff().endswith(b" z = 3\n\\ No newline at end of file\n")
