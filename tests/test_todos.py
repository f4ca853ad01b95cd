"""`ascend-port todos`: listing, grouping, totals, --check exit codes; and resolved TODOs staying resolved."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.run.todos import find_todos, render

KERNEL = """import triton
import triton.language as tl


@triton.jit
def add_kernel(a, b, n):
    tl.store(b, tl.load(a))
"""
LIBRARIES = """import pynvml
import cupy as cp

MESSAGE = "# TODO(ascend-port): NPU504 [low] this is a string, not a comment"
"""


def _port(text: str, name: str = "m.py") -> str:
    ported = handler_for(Path(name)).port(text.encode(), Selection(), PortOptions())
    return ported.new_text if ported.new_text is not None else text


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernels.py").write_text(_port(KERNEL))
    (tmp_path / "pkg" / "monitor.py").write_text(_port(LIBRARIES))
    (tmp_path / "pkg" / "clean.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("# TODO(ascend-port): NPU500 [low] not a file the tool handles\n")
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(app, ["todos", *args])


def test_lists_todos_grouped_by_rule_with_totals(tree: Path) -> None:
    result = invoke(str(tree))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "NPU500 triton-kernel: 1"
    assert lines[1].startswith(f"  {(tree / 'pkg' / 'kernels.py').as_posix()}:5  [low]  Triton kernel add_kernel")
    assert lines[3] == "NPU504 cuda-only-library: 2"
    assert lines[4].startswith(f"  {(tree / 'pkg' / 'monitor.py').as_posix()}:1  [low]  NVML")
    assert lines[5].startswith(f"  {(tree / 'pkg' / 'monitor.py').as_posix()}:3  [low]  CuPy")
    # The string that quotes a TODO is not one; notes.txt is not a file the tool handles.
    assert lines[-1] == "3 TODOs in 2 files (3 checked): 3 low"


def test_check_exits_1_while_todos_remain_and_0_when_clean(tree: Path) -> None:
    assert invoke(str(tree), "--check").exit_code == 1
    assert invoke(str(tree / "pkg" / "clean.py"), "--check").exit_code == 0
    assert invoke(str(tree), "--check", "--exclude", "pkg").exit_code == 0
    clean = invoke(str(tree / "pkg" / "clean.py"), "--check")
    assert clean.output.strip() == "0 TODOs in 0 files (1 checked)"


def test_errors_exit_2(tmp_path: Path) -> None:
    missing = invoke(str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "no such file or directory" in missing.output


def test_other_file_types_and_unknown_rules(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("cupy-cuda12x  # TODO(ascend-port): NPU601 [low] no NPU build\n")
    (tmp_path / "old.py").write_text("# TODO(ascend-port): NPU999 [medium] written by another version\nx = 1\n")
    report = find_todos([tmp_path])
    assert sorted((t.rule, t.line, t.confidence, t.text) for t in report.todos) == [
        ("NPU601", 1, "low", "no NPU build"),
        ("NPU999", 1, "medium", "written by another version"),
    ]
    text = render(report)
    assert "NPU999: 1" in text and text[-1].endswith(": 1 medium, 1 low")


def test_a_resolved_todo_does_not_come_back_unless_the_construct_is_still_there(tmp_path: Path) -> None:
    path = tmp_path / "kernels.py"
    path.write_text(_port(KERNEL))
    assert len(find_todos([tmp_path]).todos) == 1
    # Ported again, unchanged: the TODO is not written twice.
    assert _port(path.read_text()) == path.read_text()

    # The user ports the kernel by hand (it is no longer a Triton kernel) and deletes the TODO: it stays gone.
    resolved = path.read_text().replace("@triton.jit\n", "").splitlines(keepends=True)
    resolved = "".join(line for line in resolved if "TODO(ascend-port)" not in line)
    path.write_text(resolved)
    assert find_todos([tmp_path]).todos == []
    assert _port(resolved) == resolved
    assert invoke(str(tmp_path), "--check").exit_code == 0

    # Deleting only the comment while the kernel is still there: the next port writes it again.
    only_comment_removed = "".join(
        line for line in _port(KERNEL).splitlines(keepends=True) if "TODO(ascend-port)" not in line
    )
    assert only_comment_removed.count("TODO(ascend-port)") == 0
    assert _port(only_comment_removed).count("TODO(ascend-port): NPU500") == 1
