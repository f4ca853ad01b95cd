"""The git workflow of ``ascend-port apply`` on real temporary repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import (
    DIST_ONLY,
    DIST_ONLY_PORTED,
    TRAIN,
    TRAIN_DEVICE,
    TRAIN_DIST,
    TRAIN_KERNEL,
    fake_domains,
    flat,
    git,
    invoke,
    make_repo,
    private_cache,
    state,
)
from unidiff import PatchSet

import ascend_port.git.workflow as gitflow
from ascend_port.run.hunks import FileChange

__all__ = ["fake_domains", "private_cache"]  # the fixtures, imported for pytest

pytestmark = pytest.mark.usefixtures("fake_domains")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project")


def commits(repo: Path, spec: str = "main..ascend-port/npu") -> list[str]:
    return git(repo, "log", "--reverse", "--format=%H", spec).splitlines()


def test_commits_one_per_domain_on_a_new_branch(repo: Path) -> None:
    main_before = git(repo, "rev-parse", "main")
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 0, result.output
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "ascend-port/npu"
    assert git(repo, "rev-parse", "main") == main_before  # the user's branch never moves
    shas = commits(repo)
    subjects = [git(repo, "log", "-1", "--format=%s", sha) for sha in shas]
    assert subjects == [
        "ascend-port: device layer (NPU1xx) in 1 file",
        "ascend-port: distributed (NPU2xx) in 2 files",
        "ascend-port: custom kernels and extensions (NPU5xx) in 1 file",
    ]
    # Each commit holds exactly its domain's edits.
    assert [git(repo, "show", f"{sha}:train.py") + "\n" for sha in shas] == [TRAIN_DEVICE, TRAIN_DIST, TRAIN_KERNEL]
    # A file with only distributed rewrites gets its import torch_npu in that commit.
    assert git(repo, "show", f"{shas[0]}:pkg/dist_only.py") + "\n" == DIST_ONLY
    assert git(repo, "show", f"{shas[1]}:pkg/dist_only.py") + "\n" == DIST_ONLY_PORTED
    device_message = git(repo, "log", "-1", "--format=%B", shas[0])
    assert "NPU100 import-torch-npu [high]: 1" in device_message
    assert "NPU101 cuda-method [high]: 1" in device_message
    assert "NPU106 torch-cuda-api [high]: 1" in device_message
    dist_message = git(repo, "log", "-1", "--format=%B", shas[1])
    assert "NPU298 test-dist-call [high]: 2" in dist_message and "NPU100 import-torch-npu [high]: 1" in dist_message
    assert "pkg/dist_only.py" in dist_message and "NPU101" not in dist_message
    # The working tree is the complete port, clean (the report folder is excluded, not committed).
    assert (repo / "train.py").read_text() == TRAIN_KERNEL
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert "/.ascend-port/" in (repo / ".git/info/exclude").read_text().splitlines()
    assert ".ascend-port" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    output = flat(result.output)
    assert "git diff main...ascend-port/npu" in output
    assert "git switch main && git branch -D ascend-port/npu" in output
    for sha in shas:
        assert sha[:12] in output


def test_report_diffs_apply_with_git_apply_on_the_original_branch(repo: Path) -> None:
    assert invoke(str(repo), "-j", "1").exit_code == 0
    report = repo / ".ascend-port" / "ascend-port-npu"
    diffs = sorted(p.relative_to(report).as_posix() for p in report.rglob("*.diff"))
    assert diffs == ["pkg/dist_only.py.diff", "train.py.diff"]
    summary = (report / "summary.md").read_text()
    assert "| train.py:3 | NPU101 | high | device layer |" in summary
    assert "| pkg/dist_only.py:3 | NPU298 | high | distributed |" in summary
    assert (report / "files.txt").read_text().splitlines() == ["pkg/dist_only.py", "train.py"]
    assessment = json.loads((report / "assessment.json").read_text())
    assert {f["rule"] for f in assessment["findings"]} >= {"NPU101", "NPU298"}
    assert (report / "change_list.csv").read_text().startswith("File,Start Line,End Line,Operation Type,Message")
    git(repo, "switch", "-q", "main")
    for name in diffs:
        patch = (report / name).read_bytes()
        # The hunks are those unidiff reads, and the ones the review offers.
        path = name.removesuffix(".diff")
        parsed = PatchSet(patch.decode())
        change = FileChange(
            path,
            git(repo, "show", f"main:{path}").encode() + b"\n",
            git(repo, "show", f"ascend-port/npu:{path}").encode() + b"\n",
        )
        assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in parsed[0]] == [
            _header(change.hunk_text(group)) for group in change.groups()
        ]
        git(repo, "apply", "--check", str(report / name))
        git(repo, "apply", str(report / name))
    assert git(repo, "diff", "ascend-port/npu") == ""  # the diffs rebuild the branch exactly


def _header(hunk: bytes) -> tuple[int, int, int, int]:
    old, new = hunk.split(b"\n", 1)[0].decode().split()[1:3]

    def parse(text: str) -> tuple[int, int]:
        start, _, length = text[1:].partition(",")
        return int(start), int(length or 1)

    return (*parse(old), *parse(new))


def test_dirty_tree_is_refused_and_left_alone(repo: Path) -> None:
    (repo / "train.py").write_text(TRAIN + "# my edit\n")
    before = state(repo)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2
    message = flat(result.output)
    assert "uncommitted changes (train.py)" in message
    assert "git stash" in message and "--allow-dirty" in message
    assert state(repo) == before


def test_staged_change_is_dirty_too(repo: Path) -> None:
    (repo / "plain.py").write_text("x = 2\n")
    git(repo, "add", "plain.py")
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2 and "uncommitted changes (plain.py)" in flat(result.output)


def test_allow_dirty_leaves_dirty_files_out_and_keeps_them(repo: Path) -> None:
    (repo / "train.py").write_text(TRAIN + "# my edit\n")
    result = invoke(str(repo), "-j", "1", "--allow-dirty")
    assert result.exit_code == 0, result.output
    assert "left out: train.py: has uncommitted changes" in flat(result.output)
    assert [git(repo, "show", "--name-only", "--format=", sha) for sha in commits(repo)] == ["pkg/dist_only.py"]
    assert (repo / "train.py").read_text() == TRAIN + "# my edit\n"
    git(repo, "switch", "-q", "main")  # the uncommitted edit goes back with the user
    assert (repo / "train.py").read_text() == TRAIN + "# my edit\n"
    assert (repo / "pkg/dist_only.py").read_text() == DIST_ONLY


def test_untracked_file_the_port_would_change_is_refused(repo: Path) -> None:
    (repo / "notes.txt").write_text("not python\n")  # untracked, not touched by the port: fine
    (repo / "new.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    before = state(repo)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2
    assert "files git does not track (new.py)" in flat(result.output)
    assert state(repo) == before
    result = invoke(str(repo), "-j", "1", "--allow-dirty")
    assert result.exit_code == 0
    assert (repo / "new.py").read_text() == "import torch\nx = torch.ones(1).cuda()\n"
    assert "new.py" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")


def test_untracked_files_the_port_does_not_touch_are_fine(repo: Path) -> None:
    (repo / "notes.txt").write_text("not python\n")
    assert invoke(str(repo), "-j", "1").exit_code == 0
    assert (repo / "notes.txt").read_text() == "not python\n"
    assert "notes.txt" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")


def test_report_dir_option_and_a_report_dir_with_tracked_files(repo: Path, tmp_path: Path) -> None:
    before = state(repo)
    result = invoke(str(repo), "-j", "1", "--report-dir", str(repo / "pkg"))
    assert result.exit_code == 2 and "holds files tracked by git" in flat(result.output)
    assert state(repo) == before
    outside = tmp_path / "reports"
    assert invoke(str(repo), "-j", "1", "--report-dir", str(outside)).exit_code == 0
    assert (outside / "train.py.diff").exists() and (outside / "summary.md").exists()
    assert not (repo / ".ascend-port").exists()


def test_merge_in_progress_is_refused(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "other")
    (repo / "plain.py").write_text("x = 2\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "switch", "-q", "main")
    (repo / "plain.py").write_text("x = 3\n")
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "merge", "other", check=False)
    assert (repo / ".git/MERGE_HEAD").exists()
    before = state(repo)
    result = invoke(str(repo), "-j", "1", "--allow-dirty")
    assert result.exit_code == 2
    assert "a merge is in progress" in flat(result.output) and "git merge --abort" in flat(result.output)
    assert state(repo) == before


def test_rebase_in_progress_is_refused(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "other")
    (repo / "plain.py").write_text("x = 2\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "switch", "-q", "main")
    (repo / "plain.py").write_text("x = 3\n")
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "switch", "-q", "other")
    git(repo, "rebase", "main", check=False)
    result = invoke(str(repo), "-j", "1", "--allow-dirty")
    assert result.exit_code == 2
    assert "rebase" in flat(result.output) and "git rebase --abort" in flat(result.output)


def test_existing_branch_is_an_error_unless_forced(repo: Path) -> None:
    git(repo, "branch", "ascend-port/npu")
    old_tip = git(repo, "rev-parse", "ascend-port/npu")
    before = state(repo)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2
    message = flat(result.output)
    assert "branch ascend-port/npu already exists" in message
    assert "--force-branch" in message and "--branch NAME" in message and "git branch -D ascend-port/npu" in message
    assert state(repo) == before
    result = invoke(str(repo), "-j", "1", "--force-branch")
    assert result.exit_code == 0, result.output
    assert git(repo, "rev-parse", "ascend-port/npu") != old_tip
    assert len(commits(repo)) == 3


def test_force_branch_refuses_to_replace_the_current_branch(repo: Path) -> None:
    assert invoke(str(repo), "-j", "1").exit_code == 0
    result = invoke(str(repo), "-j", "1", "--force-branch")
    assert result.exit_code == 2 and "you are on ascend-port/npu" in flat(result.output)


def test_branch_option_and_paths_inside_the_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "pkg")
    result = invoke(".", "-j", "1", "--branch", "port/try-1")
    assert result.exit_code == 0, result.output
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "port/try-1"
    # Only the folder given was ported; the report is still at the repository root.
    assert git(repo, "diff", "--name-only", "main", "port/try-1") == "pkg/dist_only.py"
    assert (repo / ".ascend-port/port-try-1/pkg/dist_only.py.diff").exists()
    assert invoke(".", "--branch", "bad..name").exit_code == 2


def test_no_commit_leaves_the_port_staged(repo: Path) -> None:
    main_before = git(repo, "rev-parse", "main")
    result = invoke(str(repo), "-j", "1", "--no-commit")
    assert result.exit_code == 0, result.output
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "ascend-port/npu"
    assert git(repo, "rev-parse", "ascend-port/npu") == main_before
    assert git(repo, "diff", "--cached", "--name-only").splitlines() == ["pkg/dist_only.py", "train.py"]
    assert git(repo, "diff", "--name-only") == ""
    assert (repo / "train.py").read_text() == TRAIN_KERNEL
    assert "git diff --cached" in flat(result.output)


def test_detached_head_is_ported_and_compared_by_commit(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "--detach")
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 0, result.output
    assert f"git diff {head[:12]}...ascend-port/npu" in flat(result.output)


def test_nothing_to_port_creates_no_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "clean", {"a.py": "x = 1\n"})
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 0
    assert "Nothing to port" in result.output
    assert git(repo, "branch", "--list", "ascend-port/npu") == ""


def test_not_a_repository_needs_no_git(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    result = invoke(str(folder), "-j", "1")
    assert result.exit_code == 2
    assert "not in a git repository" in flat(result.output) and "--no-git" in flat(result.output)
    assert ".npu()" not in (folder / "a.py").read_text()
    result = invoke(str(folder), "-j", "1", "--no-git")
    assert result.exit_code == 0
    assert (folder / "a.py").read_text() == "import torch\nimport torch_npu\nx = torch.ones(1).npu()\n"


def test_git_options_are_refused_without_git(tmp_path: Path) -> None:
    result = invoke(str(tmp_path), "--no-git", "--branch", "x")
    assert result.exit_code == 2 and "--branch is an option of the git workflow" in flat(result.output)
    assert invoke(str(tmp_path), "--dry-run", "--interactive").exit_code == 2


def test_no_identity_is_refused_before_anything(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    before = state(repo)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2 and "user.name" in flat(result.output) and "--no-commit" in flat(result.output)
    assert state(repo) == before


# --- atomicity ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fail_after", [0, 1, 2, 3])
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_failure_part_way_leaves_the_original_branch_unchanged(
    repo: Path, monkeypatch: pytest.MonkeyPatch, fail_after: int, error: type[BaseException]
) -> None:
    # The device commit writes train.py; the distributed one train.py and dist_only.py; the kernels one train.py:
    # failing after 0..3 writes stops before, inside and between commits.
    before = state(repo)
    written = []

    def failing_write(path: Path, data: bytes) -> None:
        if len(written) == fail_after:
            raise error("disk full" if error is OSError else None)
        written.append(path)
        real_write(path, data)

    real_write = gitflow.write_file
    monkeypatch.setattr(gitflow, "write_file", failing_write)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == (130 if error is KeyboardInterrupt else 2), result.output
    assert ("interrupted: the port was undone" if error is KeyboardInterrupt else "writing the port failed") in flat(
        result.output
    )
    assert "you are on main with your files as they were" in flat(result.output)
    assert state(repo) == before
    assert not (repo / ".ascend-port").exists()


def test_failure_in_a_commit_is_undone(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = state(repo)
    real_stage = gitflow.Transaction.stage
    calls = []

    def stage(self, paths, message):
        calls.append(paths)
        if len(calls) == 2:  # after the first commit was made
            raise KeyboardInterrupt
        return real_stage(self, paths, message)

    monkeypatch.setattr(gitflow.Transaction, "stage", stage)
    assert invoke(str(repo), "-j", "1").exit_code == 130
    assert state(repo) == before


def test_failure_with_force_branch_restores_the_old_branch(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "branch", "ascend-port/npu", "HEAD")
    (repo / "plain.py").write_text("x = 5\n")
    git(repo, "commit", "-q", "-am", "later")
    before = state(repo)
    monkeypatch.setattr(gitflow, "write_file", lambda path, data: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert invoke(str(repo), "-j", "1", "--force-branch").exit_code == 130
    assert state(repo) == before


def test_dirty_state_survives_a_failure(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "plain.py").write_text("x = 2\n")
    git(repo, "add", "plain.py")  # staged, and then more unstaged work on top
    (repo / "plain.py").write_text("x = 3\n")
    before = state(repo)
    calls = []

    def write(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise RuntimeError("crash")
        real(path, data)

    real = gitflow.write_file
    monkeypatch.setattr(gitflow, "write_file", write)
    assert invoke(str(repo), "-j", "1", "--allow-dirty").exit_code == 2
    assert state(repo) == before


def test_real_sigint_between_steps_undoes_the_port(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real SIGINT during the transaction is acted on at the next step, and undone."""
    import os
    import signal

    before = state(repo)
    handler = signal.getsignal(signal.SIGINT)
    real = gitflow.write_file
    calls = []

    def write(path: Path, data: bytes) -> None:
        calls.append(path)
        real(path, data)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(gitflow, "write_file", write)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 130, result.output
    assert state(repo) == before
    assert signal.getsignal(signal.SIGINT) is handler


def test_dry_run_writes_nothing(repo: Path) -> None:
    """--dry-run is unchanged by the workflow: a diff on stdout, nothing written, no branch."""
    before = state(repo)
    out = invoke(str(repo), "--dry-run", "-j", "1")
    assert out.exit_code == 1 and "+import torch_npu" in out.output
    assert state(repo) == before


# --- what the terminal is told (issue 32) -----------------------------------------------------------------------


def test_quiet_apply_is_as_quiet_as_git_commit_q(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = invoke(str(repo), "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and result.stderr == ""
    assert git(repo, "branch", "--show-current") == "ascend-port/npu"


def test_apply_says_that_it_switched_branches_as_git_says_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = invoke(str(repo))
    assert result.exit_code == 0, result.output
    assert "Switched to a new branch 'ascend-port/npu'" in result.stderr.splitlines()
    assert str(repo) not in result.stderr, "the report folder is named relative to the repository"
    git(repo, "switch", "-q", "main")
    again = invoke(str(repo), "--force-branch")
    assert "Switched to and reset branch 'ascend-port/npu'" in again.stderr.splitlines()


def test_a_git_failure_is_told_in_one_sentence_with_gits_own_words(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git's stderr is quoted as git wrote it, named by its command, not run into the message with GitPython's
    `stderr: '...'` wrapping and blank lines (issue 32)."""
    import git as gitpython

    def failing_write(path: Path, data: bytes) -> None:
        raise gitpython.GitCommandError(
            ["git", "commit", "-q", "-m", "x"],
            128,
            stderr=b"fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process seems to be running",
        )

    before = state(repo)
    monkeypatch.setattr(gitflow, "write_file", failing_write)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 2
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line == (
        "error: writing the port failed: git commit: fatal: Unable to create '/r/.git/index.lock': File exists. "
        "Another git process seems to be running. It was undone: you are on main with your files as they were"
    ), line
    assert state(repo) == before


def test_each_branch_has_a_report_folder_of_its_own(tmp_path: Path) -> None:
    """A run for another branch replaced the folder of the previous one (issue 32)."""
    repo = make_repo(tmp_path / "repo")
    assert invoke(str(repo), "-q").exit_code == 0
    git(repo, "switch", "-q", "main")
    assert invoke(str(repo), "-q", "--branch", "npu/try2").exit_code == 0
    first, second = repo / ".ascend-port" / "ascend-port-npu", repo / ".ascend-port" / "npu-try2"
    for folder in (first, second):
        assert (folder / "summary.md").is_file() and (folder / "assessment.md").is_file(), folder
    assert "branch `npu/try2`" in (second / "summary.md").read_text()
