"""Pull-request use: ``apply --check``, exit codes of every format, ``--changed-since`` on a real git repository,
``[tool.ascend-port]`` and its precedence, and the pre-commit hooks and GitHub Action definitions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import emulation
import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.reports import FORMATS

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
PORTED = "import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\n"


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(CUDA)
    (tmp_path / "clean.py").write_text("x = 1\n")
    return tmp_path


# --- apply --check ---------------------------------------------------------------------------------------------


def test_check_prints_only_a_summary_and_exits_1_until_ported(project: Path) -> None:
    result = invoke("apply", ".", "--check")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "would port train.py" in result.stderr and "not fully ported" in result.stderr
    assert (project / "train.py").read_text() == CUDA  # nothing written
    assert invoke("apply", ".", "--no-git").exit_code == 0
    done = invoke("apply", ".", "--check")
    assert done.exit_code == 0 and "fully ported" in done.stderr and done.stdout == ""


def test_check_with_dry_run_prints_the_diff(project: Path) -> None:
    result = invoke("apply", ".", "--check", "--dry-run")
    assert result.exit_code == 1
    assert "+x = torch.ones(2).npu()" in result.stdout
    assert invoke("apply", ".", "--check", "--exit-zero").exit_code == 0


@pytest.mark.parametrize("extra", [("--no-git",), ("--interactive",), ("--branch", "x")])
def test_check_refuses_options_that_write(project: Path, extra: tuple[str, ...]) -> None:
    assert invoke("apply", ".", "--check", *extra).exit_code == 2
    assert (project / "train.py").read_text() == CUDA


def test_check_exits_2_on_a_broken_file(project: Path) -> None:
    (project / "broken.py").write_text("print 'cuda'\nx = y.cuda()\n")
    assert invoke("apply", ".", "--check").exit_code == 2


# --- exit codes of scan, every format ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_scan_exit_codes_in_every_format(project: Path, fmt: str) -> None:
    assert invoke("scan", ".", "--format", fmt).exit_code == 1
    assert invoke("scan", ".", "--format", fmt, "--exit-zero").exit_code == 0
    assert invoke("scan", "clean.py", "--format", fmt).exit_code == 0
    (project / "broken.py").write_text("print 'cuda'\nx = y.cuda()\n")
    assert invoke("scan", ".", "--format", fmt, "--exit-zero").exit_code == 2  # errors are never zeroed


def test_scan_usage_errors_exit_2(project: Path) -> None:
    assert invoke("scan", ".", "--format", "xml").exit_code == 2
    assert invoke("scan", ".", "--format", "json", "--output", str(project / "no" / "such" / "dir.json")).exit_code == 2


def test_output_file_leaves_stdout_empty(project: Path) -> None:
    result = invoke("scan", ".", "--format", "text", "--output", "report.txt")
    assert result.exit_code == 1 and result.stdout == ""
    assert "train.py:3" in (project / "report.txt").read_text()


# --- --changed-since --------------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """main: base.py, edited.py, staged.py, unchanged.py (all CUDA); branch `feature` commits a change to
    committed.py, then the working tree changes edited.py, stages staged.py, adds untracked.py and ignored.py."""
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    for name in ("committed.py", "edited.py", "staged.py", "unchanged.py"):
        (tmp_path / name).write_text(CUDA)
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    (tmp_path / "committed.py").write_text(CUDA + "y = 1\n")
    git(tmp_path, "commit", "-q", "-am", "feature work")
    git(tmp_path, "checkout", "-q", "main")
    (tmp_path / "later_on_main.py").write_text(CUDA)  # on main after the branch point: not in the pull request
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "main moves on")
    git(tmp_path, "checkout", "-q", "feature")
    (tmp_path / "edited.py").write_text(CUDA + "z = 2\n")
    (tmp_path / "staged.py").write_text(CUDA + "w = 3\n")
    git(tmp_path, "add", "staged.py")
    (tmp_path / "untracked.py").write_text(CUDA)
    (tmp_path / "ignored.py").write_text(CUDA)
    return tmp_path


def changed_in_report(*args: str) -> set[str]:
    result = invoke("scan", ".", "--format", "csv", "--exit-zero", *args)
    assert result.exit_code == 0, result.output
    return {line.split(",")[0] for line in result.stdout.splitlines()[1:]}


def test_changed_since_restricts_to_the_pull_request(repo: Path) -> None:
    assert changed_in_report("--changed-since", "main") == {"committed.py", "edited.py", "staged.py", "untracked.py"}
    assert changed_in_report() == {"committed.py", "edited.py", "staged.py", "unchanged.py", "untracked.py"}
    # The same for apply.
    check = invoke("apply", ".", "--check", "--changed-since", "main")
    assert check.exit_code == 1 and "unchanged.py" not in check.stderr and "would port untracked.py" in check.stderr


def test_changed_since_with_a_subfolder_and_nothing_changed(repo: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "mod.py").write_text(CUDA)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "everything")
    assert changed_in_report("--changed-since", "HEAD") == set()
    result = invoke("apply", "sub", "--check", "--changed-since", "HEAD")
    assert result.exit_code == 0 and "0 files checked" in result.stderr
    (repo / "sub" / "mod.py").write_text(CUDA + "q = 1\n")
    result = invoke("scan", "sub", "--format", "csv", "--changed-since", "HEAD")
    assert {line.split(",")[0] for line in result.stdout.splitlines()[1:]} == {"sub/mod.py"}


def test_changed_since_errors_exit_2(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    bad_ref = invoke("scan", ".", "--changed-since", "no-such-branch")
    assert bad_ref.exit_code == 2 and "no-such-branch" in bad_ref.stderr
    outside = tmp_path_factory.mktemp("not_a_repo")
    (outside / "a.py").write_text(CUDA)
    not_a_repo = invoke("scan", str(outside), "--changed-since", "main")
    assert not_a_repo.exit_code == 2 and "git repository" in not_a_repo.stderr


# --- configuration ----------------------------------------------------------------------------------------------


def write_config(folder: Path, body: str) -> None:
    (folder / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n[tool.ascend-port]\n{body}')


SETTING = 'import torch\nDEVICE = "cuda"\nx = t.cuda()\n'  # NPU104 (medium) and NPU101 (high)


def rules_reported(*args: str) -> set[str]:
    result = invoke("scan", *args, "--format", "csv", "--exit-zero")
    assert result.exit_code == 0, result.output
    return {line.split(",")[5] for line in result.stdout.splitlines()[1:]}


def test_config_is_found_above_the_path_and_flags_override_it(project: Path) -> None:
    write_config(project, 'ignore = ["NPU104"]\nmin-confidence = "high"\n')
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text(SETTING)
    assert rules_reported("src") == {"NPU100", "NPU101"}  # from the file: NPU104 ignored
    assert rules_reported("src", "--ignore", "NPU101", "--min-confidence", "low") == {"NPU100", "NPU104"}
    assert rules_reported("src", "--select", "NPU104") == set()  # the file's min-confidence high still applies


def test_nearest_pyproject_with_the_table_wins(project: Path) -> None:
    write_config(project, 'select = "NPU101"\n')
    (project / "pkg").mkdir()
    (project / "pkg" / "pyproject.toml").write_text('[project]\nname = "inner"\n')  # no table: passed over
    (project / "pkg" / "app.py").write_text(SETTING)
    assert rules_reported("pkg") == {"NPU101"}
    write_config(project / "pkg", 'select = ["NPU104"]\n')
    assert rules_reported("pkg") == {"NPU104"}


def test_exclude_from_config(project: Path) -> None:
    write_config(project, 'exclude = ["vendored"]\n')
    (project / "vendored").mkdir()
    (project / "vendored" / "lib.py").write_text(CUDA)
    result = invoke("apply", ".", "--check")
    assert "would port vendored" not in result.stderr and "would port train.py" in result.stderr
    assert "1 file skipped (excluded): vendored/lib.py" in result.stderr  # never silently


@pytest.mark.parametrize(
    "body, reason",
    [
        ('colour = "red"\n', "unknown key 'colour'"),
        ('min-confidence = "sure"\n', "unknown confidence"),
        ('select = ["NPU999"]\n', "matches no rule"),
        ("select = 3\n", "select must be a string or a list of strings"),
        ('attention-backend = "cudnn"\n', "attention-backend 'cudnn'"),
        ("select = [\n", "invalid TOML"),
    ],
)
def test_bad_config_exits_2_naming_the_file_and_the_reason(project: Path, body: str, reason: str) -> None:
    write_config(project, body)
    result = invoke("scan", ".")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert str(project / "pyproject.toml") in message and reason in message


def test_config_command_prints_the_effective_configuration(project: Path) -> None:
    write_config(project, 'ignore = ["NPU104"]\nbranch = "npu-port"\nattention-backend = "mindiesd"\n')
    shown = invoke("config").stdout
    assert f"# effective configuration; file: {project / 'pyproject.toml'}" in shown
    assert f'ignore = ["NPU104"]  # {project / "pyproject.toml"}' in shown
    assert 'select = ["ALL"]  # default' in shown
    assert 'attention-backend = "mindiesd"' in shown and 'branch = "npu-port"' in shown
    overridden = invoke("config", ".", "--ignore", "NPU2", "--branch", "other").stdout
    assert 'ignore = ["NPU2"]  # command line' in overridden and 'branch = "other"  # command line' in overridden
    assert invoke("config", "nope").exit_code == 2


def test_attention_backend_reaches_the_run_options(project: Path) -> None:
    from ascend_port.run import config

    write_config(project, 'attention-backend = "mindiesd"\n')
    settings = config.resolve([project])
    assert settings.run_config().options == {"attention_backend": "mindiesd"}
    assert config.resolve([project], {"attention-backend": "torch_npu"}).run_config().options == {
        "attention_backend": "torch_npu"
    }


# --- pre-commit and GitHub Action -------------------------------------------------------------------------------


def test_pre_commit_hooks() -> None:
    hooks = {hook["id"]: hook for hook in YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["ascend-port-check"]["entry"] == "ascend-port apply --check"
    assert hooks["ascend-port-fix"]["entry"] == "ascend-port apply --no-git"
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["name"]


def test_github_action() -> None:
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("github/codeql-action/upload-sarif@v4") for u in uses)
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "--format sarif" in scripts and "apply" in scripts and "--check" in scripts
    assert "GITHUB_STEP_SUMMARY" in scripts and "--changed-since" in scripts
    for step in steps:
        if "run" in step:
            assert step["shell"] == "bash"  # composite steps must name their shell


def _action_step(name_prefix: str) -> dict:
    steps = YAML(typ="safe").load((ROOT / "action.yml").read_text())["runs"]["steps"]
    return next(step for step in steps if step.get("name", "").startswith(name_prefix))


@pytest.mark.parametrize(
    ("command", "status"),
    [("python -c 'import torch, torch_npu; print(torch.ones(2).npu().device)'", 0), ("python -c 'exit(3)'", 3)],
)
def test_github_action_emulate_step(tmp_path: Path, command: str, status: int) -> None:
    """The composite step's script, run the way GitHub runs it (bash -eo pipefail): the command's status is the
    step's, and the job summary says how it went whatever the status."""
    emulation.needs_compiler()
    pytest.importorskip("torch")
    step = _action_step("Emulate")
    assert step["if"] == "always() && inputs.emulate != ''"
    summary = tmp_path / "summary.md"
    bin_dir = str(Path(sys.executable).parent)
    env = {**emulation.environment(), "EMULATE": command, "GITHUB_STEP_SUMMARY": str(summary)}
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])  # `python` and `ascend-port` of this venv
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == status, result.stdout + result.stderr
    text = summary.read_text("utf-8")
    assert f"exited with status {status} on the emulated NPU" in text
    assert f"ascend-port emulate: exit code {status}" in text
    if status == 0:
        assert "npu:0" in result.stdout
        assert (tmp_path / "ascend-port-emulate.json").exists()
