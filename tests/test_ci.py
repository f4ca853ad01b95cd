"""Pull-request use: ``apply --check``, exit codes of every format, ``--changed-since`` on a real git repository,
``[tool.ascend-port]`` and its precedence, and the pre-commit hooks and GitHub Action definitions."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import emulation
import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
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


def test_scan_sarif_option_writes_the_sarif_of_the_same_scan(project: Path) -> None:
    """`--sarif FILE` (the GitHub Action's one scan): the SARIF that `--format sarif` writes, besides the report in
    the chosen format, and the same exit code."""
    both = invoke("scan", ".", "--format", "github", "--sarif", "both.sarif")
    assert both.exit_code == 1 and both.stdout == invoke("scan", ".", "--format", "github").stdout
    assert invoke("scan", ".", "--format", "sarif", "--output", "alone.sarif").exit_code == 1
    assert (project / "both.sarif").read_text() == (project / "alone.sarif").read_text()
    assert json.loads((project / "both.sarif").read_text())["runs"][0]["results"]
    assert invoke("scan", ".", "--sarif", str(project / "no" / "such" / "dir.sarif")).exit_code == 2


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
        ('select = ["NPU999"]\n', "select: unknown rule 'NPU999' (matches no rule"),
        ("select = 3\n", "select: must be a string or a list of strings"),
        ('attention-backend = "cudnn"\n', "attention-backend: 'cudnn'"),
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
    assert settings.run_config().options == PortOptions(attention_backend="mindiesd")
    assert config.resolve([project], {"attention-backend": "torch_npu"}).run_config().options == PortOptions()


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
    assert "--sarif" in scripts and "apply" in scripts and "--check" in scripts
    assert "GITHUB_STEP_SUMMARY" in scripts and "--changed-since" in scripts
    for step in steps:
        if "run" in step:
            assert step["shell"] == "bash"  # composite steps must name their shell
            # ascend-port is called by the path of its own virtualenv, never as the job's `ascend-port` or `python`
            assert not re.search(r"^\s*(ascend-port|python|pip) ", step["run"], re.MULTILINE), step["name"]
            assert "GITHUB_ENV" not in step["run"] and "GITHUB_PATH" not in step["run"]  # no job-wide side effect


def test_github_action_leaves_the_callers_python_alone() -> None:
    """setup-python with update-environment: false puts nothing on PATH: the job's `python` stays the caller's."""
    setup = next(step for step in _action()["runs"]["steps"] if step.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["update-environment"] is False or setup["with"]["update-environment"] == "false"
    install = _action_step("Install")
    assert install["env"]["PYTHON"] == "${{ steps." + setup["id"] + ".outputs.python-path }}"
    assert 'venv="$RUNNER_TEMP/ascend-port-venv"' in install["run"] and '"$PYTHON" -m venv "$venv"' in install["run"]


def test_github_action_caches_the_results() -> None:
    cache = next(step for step in _action()["runs"]["steps"] if step.get("uses", "").startswith("actions/cache@v4"))
    assert cache["with"]["path"] == "~/.cache/ascend-port"
    key = cache["with"]["key"]
    assert "runner.os" in key and "steps.install.outputs.version" in key and key.endswith("${{ github.sha }}")
    restore = cache["with"]["restore-keys"].splitlines()
    assert key.startswith(restore[0]) and restore[0].startswith(restore[1])  # partial hits: same version, then any
    names = [step.get("name", step.get("uses")) for step in _action()["runs"]["steps"]]
    assert names.index(cache["name"]) < names.index(_action_step("Scan")["name"])  # restored before the first scan


def _action() -> dict:
    return YAML(typ="safe").load((ROOT / "action.yml").read_text())


def _action_step(name_prefix: str) -> dict:
    return next(step for step in _action()["runs"]["steps"] if step.get("name", "").startswith(name_prefix))


EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _run_action_step(name_prefix: str, context: dict[str, str], cwd: Path, path: str, runner_temp: Path):
    """A composite step's `run:` script, the way the runner runs it: `bash -eo pipefail`, its `env:` with the
    expressions substituted from ``context`` (inputs at their defaults unless given; a context value GitHub leaves
    empty, such as the base commit outside a pull request, is empty), GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and
    RUNNER_TEMP as files of the test. The step's outputs land in ``context`` as ``steps.ID.outputs.NAME``."""
    step = _action_step(name_prefix)
    inputs = {f"inputs.{name}": str(spec.get("default", "")) for name, spec in _action()["inputs"].items()}
    values = {**inputs, **context}

    def expand(text: str) -> str:
        def value(match: re.Match) -> str:
            name = match.group(1)
            assert name.split(".")[0] in ("inputs", "github", "steps", "runner"), name
            assert not name.startswith("inputs.") or name in inputs, f"no such input: {name}"
            return values.get(name, "")

        return EXPRESSION.sub(value, text)

    output = runner_temp / "github_output"
    output.write_text("")
    env = {
        **emulation.environment(),
        **{key: expand(str(v)) for key, v in step.get("env", {}).items()},
        "PATH": path,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(runner_temp / "summary.md"),
        "RUNNER_TEMP": str(runner_temp),
    }
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    for line in output.read_text().splitlines():
        key, _, val = line.partition("=")
        context[f"steps.{step['id']}.outputs.{key}"] = val
    return result


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def action_repo(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A git repository holding the example project (the pull request's base), and one commit on top that adds a
    CUDA file with a dozen rewrites and, last, a TODO; a wrapper `ascend-port` that logs each call; the context."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "cuda_trainer", repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    lines = [f"x{i} = torch.ones({i + 1}).cuda()" for i in range(12)]
    (repo / "added.py").write_text("import torch\n\n" + "\n".join(lines) + "\nused = torch.cuda.memory_usage()\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "pull request")
    tool = Path(sys.executable).parent / "ascend-port"
    if not tool.exists():
        pytest.skip("no ascend-port script beside this Python")
    temp = tmp_path / "runner_temp"
    temp.mkdir()
    wrapper = temp / "ascend-port"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{temp}/calls.log"\nexec "{tool}" "$@"\n')
    wrapper.chmod(0o755)
    context = {
        "github.action_path": str(ROOT),
        "github.event.pull_request.base.sha": base,
        "steps.install.outputs.ascend-port": str(wrapper),
    }
    return repo, temp, context


SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # no ascend-port, no python of this venv: the steps call them by path


def test_github_action_scan_step_writes_both_reports_from_one_scan(action_repo) -> None:
    repo, temp, context = action_repo
    result = _run_action_step("Scan", context, repo, SYSTEM_PATH, temp)
    assert result.returncode == 0, result.stderr  # --exit-zero: findings do not fail the step
    calls = (temp / "calls.log").read_text().splitlines()
    assert len(calls) == 1 and "--format github --sarif ascend-port.sarif" in calls[0]
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    # changed-only: only the pull request's file; its TODO (last in the file) is the first annotation, a warning,
    # and the 13 rewrite notices come after it (GitHub would show 10 of them)
    assert {re.search(r"file=([^,]+)", line).group(1) for line in annotations} == {"added.py"}
    assert annotations[0].startswith("::warning file=added.py,line=15,") and "NPU107" in annotations[0]
    assert [line.split(" ", 1)[0] for line in annotations[1:]] == ["::notice"] * (len(annotations) - 1)
    sarif = json.loads((repo / "ascend-port.sarif").read_text())
    results = sarif["runs"][0]["results"]
    assert len(results) == len(annotations)
    assert context["steps.scan.outputs.changed"] == f"--changed-since {context['github.event.pull_request.base.sha']}"


def test_github_action_check_step_summary_and_exit_code(action_repo) -> None:
    repo, temp, context = action_repo
    assert _run_action_step("Scan", context, repo, SYSTEM_PATH, temp).returncode == 0
    result = _run_action_step("Check", context, repo, SYSTEM_PATH, temp)
    assert result.returncode == 1, result.stderr  # the port would change added.py
    summary = (temp / "summary.md").read_text()
    assert "`ascend-port apply` would make these changes:" in summary and "+x0 = torch.ones(1).npu()" in summary
    assert "train.py" not in summary  # the base's files are not the pull request's
    # Outside a pull request (no base commit) the whole project is checked; once ported, nothing is left.
    context["github.event.pull_request.base.sha"] = ""
    assert _run_action_step("Scan", context, repo, SYSTEM_PATH, temp).returncode == 0
    assert context["steps.scan.outputs.changed"] == ""
    subprocess.run([str(context["steps.install.outputs.ascend-port"]), "apply", ".", "--no-git", "-q"], cwd=repo)
    (temp / "summary.md").unlink()
    result = _run_action_step("Check", context, repo, SYSTEM_PATH, temp)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Nothing left to port to Ascend NPUs." in (temp / "summary.md").read_text()
    # An error (a path that does not exist) is status 2, and the summary says so.
    context["inputs.path"] = "missing"
    result = _run_action_step("Check", context, repo, SYSTEM_PATH, temp)
    assert result.returncode == 2 and "ascend-port failed (exit status 2)" in (temp / "summary.md").read_text()


@pytest.fixture(scope="module")
def action_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The install step, run for real: a virtualenv under RUNNER_TEMP made by a Python that is not on the step's
    PATH (setup-python's python-path), ascend-port installed into it from the action's own source (pip reaches
    the package index: about 30 s)."""
    temp = tmp_path_factory.mktemp("runner_temp")
    python = shutil.which("python3", path=os.defpath) or sys._base_executable
    context = {"github.action_path": str(ROOT), "steps.python.outputs.python-path": python}
    result = _run_action_step("Install", context, temp, SYSTEM_PATH, temp)
    assert result.returncode == 0, result.stdout + result.stderr
    return temp, context


@pytest.mark.slow
def test_github_action_install_step(action_venv) -> None:
    temp, context = action_venv
    tool = Path(context["steps.install.outputs.ascend-port"])
    assert tool == temp / "ascend-port-venv" / "bin" / "ascend-port" and tool.exists()
    from ascend_port import __version__

    assert context["steps.install.outputs.version"] == __version__
    assert not (temp / "github_env").exists()  # nothing for the job's later steps but the step's own outputs
    # its own Python, without the test extras
    packages = subprocess.run([str(tool.parent / "python"), "-m", "pip", "list"], capture_output=True, text=True)
    assert "libcst" in packages.stdout.lower() and "pytest" not in packages.stdout.lower()


@pytest.mark.slow
def test_github_action_emulate_step_with_ascend_port_in_its_own_venv(action_venv, tmp_path: Path) -> None:
    """The emulator from the action's virtualenv runs the caller's `python` (this venv, with torch) and puts its
    stand-in torch_npu on that Python's path."""
    emulation.needs_compiler()
    pytest.importorskip("torch")
    _, context = action_venv
    context = {**context, "inputs.emulate": "python -c 'import torch, torch_npu; print(torch.ones(2).npu().device)'"}
    path = os.pathsep.join([str(Path(sys.executable).parent), SYSTEM_PATH])  # the caller's python first
    result = _run_action_step("Emulate", context, tmp_path, path, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "npu:0" in result.stdout


@pytest.mark.slow  # builds the emulated device (about 45 s the first time)
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
    bin_dir = Path(sys.executable).parent
    context = {"inputs.emulate": command, "steps.install.outputs.ascend-port": str(bin_dir / "ascend-port")}
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])  # `python` of this venv
    result = _run_action_step("Emulate", context, tmp_path, path, tmp_path)
    assert result.returncode == status, result.stdout + result.stderr
    text = (tmp_path / "summary.md").read_text("utf-8")
    assert f"exited with status {status} on the emulated NPU" in text
    assert f"ascend-port emulate: exit code {status}" in text
    if status == 0:
        assert "npu:0" in result.stdout
        assert (tmp_path / "ascend-port-emulate.json").exists()
