"""Issue 20, "never lose work": Ctrl-C while writing in place and while writing the report, --force-branch over
commits of the user's, read-only files, and dry-run diffs of folders outside the working directory.

Ctrl-C is a real SIGINT sent to the command at a known point by the test hook (ASCEND_PORT_TEST_SIGINT,
core/interrupts.py: ``written:N`` in run/inplace.py, ``report`` in git/workflow.py), so nothing depends on timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import flat, git, invoke, make_repo, private_cache, state
from test_review import spawn

__all__ = ["private_cache"]

pytestmark = pytest.mark.usefixtures("private_cache")

CUDA = "import torch\n\nx = torch.ones(1).cuda()\n"
PORTED = "import torch\nimport torch_npu\n\nx = torch.ones(1).npu()\n"


def cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from ascend_port.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **env},
        timeout=300,
    )


def project(folder: Path, count: int = 5) -> Path:
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"m{i}.py").write_text(CUDA)
    return folder


# --- Ctrl-C while the files are ported (before anything is written) ---------------------------------------------


@pytest.mark.parametrize("args", [("scan",), ("apply", "--dry-run"), ("apply", "--no-git"), ("apply",)])
def test_ctrl_c_while_porting_says_that_nothing_was_written(tmp_path: Path, args: tuple[str, ...]) -> None:
    """One interrupt line in every mode (issue 32: scan, --dry-run and --no-git exited 130 without a word)."""
    folder = make_repo(tmp_path / "repo", {f"m{i}.py": CUDA for i in range(5)})
    before = state(folder)
    run = cli(args[0], str(folder), *args[1:], "-j", "1", "--no-cache", ASCEND_PORT_TEST_SIGINT="ported:2")
    assert run.returncode == 130, run.stderr
    assert run.stderr.strip().splitlines()[-1] == "interrupted: nothing was written", run.stderr
    assert state(folder) == before and all(p.read_text() == CUDA for p in folder.glob("*.py"))


# --- Ctrl-C with --no-git ---------------------------------------------------------------------------------------


def test_ctrl_c_while_writing_in_place_finishes_the_file_and_names_the_ported_ones(tmp_path: Path) -> None:
    folder = project(tmp_path / "plain")
    run = cli("apply", str(folder), "--no-git", "-j", "1", ASCEND_PORT_TEST_SIGINT="written:2")
    assert run.returncode == 130, run.stderr
    message = flat(run.stderr)
    assert "interrupted: 2 files ported, 3 left as they were" in message and "run the same command again" in message
    ported = sorted(p.name for p in folder.iterdir() if p.read_text() == PORTED)
    assert len(ported) == 2 and all(f"ported: {folder / name}" in message for name in ported)
    assert all(p.read_text() in (CUDA, PORTED) for p in folder.iterdir())  # no file half-written
    assert not list(folder.rglob("*.ascend-port.tmp"))
    again = cli("apply", str(folder), "--no-git", "-j", "1")  # the same command finishes the port
    assert again.returncode == 0, again.stderr
    assert all(p.read_text() == PORTED for p in folder.iterdir())


def test_ctrl_c_on_the_terminal_while_writing_in_place(tmp_path: Path) -> None:
    """The same with Ctrl-C pressed on a terminal (pexpect): the whole process group gets SIGINT."""
    folder = project(tmp_path / "plain")
    child = spawn(folder, "--no-git", ASCEND_PORT_TEST_SIGINT="written:3:terminal")
    child.expect("test: waiting for Ctrl-C")
    child.child.sendintr()
    child.expect("interrupted: 3 files ported, 2 left as they were")
    assert child.finish() == 130
    assert sorted(p.read_text() for p in folder.iterdir()) == [CUDA] * 2 + [PORTED] * 3
    assert not list(folder.rglob("*.ascend-port.tmp"))


# --- Ctrl-C in git mode after the commits -----------------------------------------------------------------------


def test_ctrl_c_while_the_report_is_written_skips_it_and_keeps_the_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": CUDA})
    run = cli("apply", str(repo), "-j", "1", ASCEND_PORT_TEST_SIGINT="report")
    assert run.returncode == 130, run.stderr
    assert "Writing the report to" in run.stderr and "Ctrl-C skips it: the port is committed" in flat(run.stderr)
    assert "interrupted: the report was skipped" in flat(run.stderr)
    assert "Compare:" in run.stdout  # the outcome is still printed: the commits and how to compare or drop them
    assert git(repo, "log", "--format=%s", "main..ascend-port/npu")
    assert (repo / "m.py").read_text() == PORTED


def test_ctrl_c_on_the_terminal_while_the_report_is_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": CUDA})
    child = spawn(repo, ASCEND_PORT_TEST_SIGINT="report:terminal")
    child.expect("(Ctrl-C skips it: the port is committed)")
    child.expect("test: waiting for Ctrl-C")
    child.child.sendintr()
    child.expect("interrupted: the report was skipped")
    child.expect("Compare:")
    assert child.finish() == 130
    assert (repo / "m.py").read_text() == PORTED


# --- --force-branch ---------------------------------------------------------------------------------------------


def test_force_branch_replaces_an_earlier_port_and_prints_its_old_tip(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": CUDA})
    assert invoke(str(repo), "-j", "1").exit_code == 0
    old_tip = git(repo, "rev-parse", "ascend-port/npu")
    git(repo, "switch", "-q", "main")
    result = invoke(str(repo), "-j", "1", "--force-branch")
    assert result.exit_code == 0, result.output
    assert f"its old tip was {old_tip[:12]}" in flat(result.output)
    assert f"git branch ascend-port/npu-old {old_tip[:12]}" in flat(result.output)


def test_force_branch_refuses_a_branch_with_commits_of_the_user(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": CUDA})
    assert invoke(str(repo), "-j", "1").exit_code == 0
    (repo / "notes.txt").write_text("my work\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "my fix on top of the port")
    tip = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")
    before = state(repo)
    result = invoke(str(repo), "-j", "1", "--force-branch")
    assert result.exit_code == 2
    message = flat(result.output)
    assert "holds 1 commit ascend-port did not make" in message and "my fix on top of the port" in message
    assert f"git branch ascend-port/npu-kept {tip[:12]}" in message
    assert state(repo) == before and git(repo, "rev-parse", "ascend-port/npu") == tip


# --- read-only files --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["no-git", "git"])
def test_read_only_files_are_refused_and_the_others_ported(tmp_path: Path, mode: str) -> None:
    files = {"a.py": CUDA, "b.py": CUDA}
    folder = make_repo(tmp_path / "repo", files) if mode == "git" else tmp_path / "plain"
    if mode == "no-git":
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
    (folder / "a.py").chmod(0o444)
    result = invoke(str(folder), "-j", "1", *(["--no-git"] if mode == "no-git" else []))
    assert result.exit_code == 2, result.output
    assert "a.py: cannot write: Permission denied (the file is read-only)" in flat(result.output)
    assert (folder / "a.py").read_text() == CUDA and (folder / "b.py").read_text() == PORTED
    assert (folder / "a.py").stat().st_mode & 0o777 == 0o444


# --- dry-run of a folder outside the working directory ----------------------------------------------------------


@pytest.mark.parametrize("in_git", [True, False])
def test_dry_run_outside_the_working_directory_gives_a_diff_git_apply_takes(tmp_path: Path, in_git: bool) -> None:
    folder = project(tmp_path / "elsewhere" / "proj")
    (folder / "sub").mkdir()
    (folder / "sub" / "model.py").write_text(CUDA)
    if in_git:
        git(folder.parent, "init", "-q")  # the repository's root is above the folder given
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    run = cli("apply", str(folder), "--dry-run", "-j", "1", cwd=elsewhere)
    assert run.returncode == 1, run.stderr
    headers = [line for line in run.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers and not any("//" in line for line in headers)
    root = folder.parent if in_git else folder
    assert ("--- a/proj/sub/model.py" if in_git else "--- a/sub/model.py") in headers
    assert f"paths in the diff are relative to {root}" in flat(run.stderr)
    patch = tmp_path / "port.diff"
    patch.write_text(run.stdout)
    applied = subprocess.run(["git", "apply", "--check", str(patch)], cwd=root, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
