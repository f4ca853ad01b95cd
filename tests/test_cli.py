"""The command line and the engine as a user meets them: exit codes, diffs git accepts, in-place writes that keep
bytes, modes and encodings, bad files that do not stop a run, ignored and untriggered files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app

runner = CliRunner()
CUDA_MODULE = "import torch\n\nx = torch.ones(2).cuda()\n"
PORTED_MODULE = "import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\n"


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(CUDA_MODULE)
    (tmp_path / "clean.py").write_text("import torch\n\nx = torch.ones(2)\n")
    return tmp_path


def test_dry_run_prints_a_diff_git_applies_and_writes_nothing(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    result = invoke("apply", ".", "--dry-run")
    assert result.exit_code == 1
    assert "+x = torch.ones(2).npu()" in result.stdout
    assert (project / "train.py").read_text() == CUDA_MODULE
    (project / "port.diff").write_text(result.stdout)
    subprocess.run(["git", "apply", "port.diff"], cwd=project, check=True)
    assert (project / "train.py").read_text() == PORTED_MODULE


def test_dry_run_exits_0_when_nothing_is_pending(project: Path) -> None:
    (project / "train.py").write_text(PORTED_MODULE)
    result = invoke("apply", ".", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_apply_no_git_writes_in_place_and_second_run_is_a_no_op(project: Path) -> None:
    script = project / "train.py"
    script.chmod(0o755)
    assert invoke("apply", ".", "--no-git").exit_code == 0
    assert script.read_text() == PORTED_MODULE
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert invoke("apply", ".", "--dry-run").exit_code == 0


def test_apply_without_a_mode_is_refused(project: Path) -> None:
    result = invoke("apply", ".")
    assert result.exit_code == 2
    assert "--no-git" in result.stderr
    assert (project / "train.py").read_text() == CUDA_MODULE


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            b"\xef\xbb\xbfimport torch\r\nx = t.cuda()\r\n",
            b"\xef\xbb\xbfimport torch\r\nimport torch_npu\r\nx = t.npu()\r\n",
        ),
        (
            "# -*- coding: latin-1 -*-\nimport torch\ns = 'é'\nx = t.cuda()\n".encode("latin-1"),
            "# -*- coding: latin-1 -*-\nimport torch\nimport torch_npu\ns = 'é'\nx = t.npu()\n".encode("latin-1"),
        ),
        (b"import torch\nx = t.cuda()", b"import torch\nimport torch_npu\nx = t.npu()"),
        (
            b"import torch\n\ndef f(t):\n\tif t:\n\t\treturn t.cuda()\n",
            b"import torch\nimport torch_npu\n\ndef f(t):\n\tif t:\n\t\treturn t.npu()\n",
        ),
    ],
)
def test_bytes_encoding_bom_and_line_endings_are_kept(project: Path, data: bytes, expected: bytes) -> None:
    (project / "train.py").write_bytes(data)
    assert invoke("apply", "train.py", "--no-git").exit_code == 0
    assert (project / "train.py").read_bytes() == expected


def test_a_bad_file_is_reported_and_the_run_goes_on(project: Path) -> None:
    (project / "py2.py").write_text("print 'cuda'\nx = y.cuda()\n")
    (project / "binary.py").write_bytes(b"\x00\x01cuda")
    result = invoke("apply", ".", "--no-git")
    assert result.exit_code == 2
    assert "py2.py" in result.stderr and "parse" in result.stderr
    assert "error: binary.py" not in result.stderr  # binary files are skipped, not errors: named as skipped
    assert "1 file skipped (binary file: contains NUL bytes): binary.py" in result.stderr
    assert (project / "py2.py").read_text() == "print 'cuda'\nx = y.cuda()\n"
    assert (project / "train.py").read_text() == PORTED_MODULE


def test_files_without_a_trigger_are_never_parsed(project: Path) -> None:
    (project / "broken.py").write_text("def f(:\n    pass\n")  # unparsable, but nothing to port
    assert invoke("apply", ".", "--dry-run").exit_code == 1  # train.py only; no parse error reported


def test_gitignored_virtualenv_and_build_folders_are_skipped(project: Path) -> None:
    for folder in ("ignored", "venv", "build", "node_modules"):
        (project / folder).mkdir()
        (project / folder / "mod.py").write_text(CUDA_MODULE)
    (project / "env").mkdir()
    (project / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "env" / "mod.py").write_text(CUDA_MODULE)
    (project / ".gitignore").write_text("ignored/\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    result = invoke("apply", ".", "--dry-run")
    assert result.stdout.count("+++ ") == 1
    assert "+++ b/train.py" in result.stdout


def test_gitignore_is_not_applied_outside_git(project: Path) -> None:
    # A tree that is not a repository (a release tarball, an sdist) has no ignore rules: see test_discovery.py.
    (project / "gen").mkdir()
    (project / "gen" / "mod.py").write_text(CUDA_MODULE)
    (project / "skip_me.py").write_text(CUDA_MODULE)
    (project / ".gitignore").write_text("gen/\nskip_*.py\n")
    result = invoke("apply", ".", "--dry-run")
    assert result.stdout.count("+++ ") == 3


def test_exclude_option(project: Path) -> None:
    assert invoke("apply", ".", "--dry-run", "--exclude", "train.py").exit_code == 0


def test_symlinks_are_not_followed(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "other.py").write_text(CUDA_MODULE)
    os.symlink(outside, project / "linked_dir")
    os.symlink(outside / "other.py", project / "linked.py")
    assert invoke("apply", ".", "--no-git").exit_code == 0
    assert (outside / "other.py").read_text() == CUDA_MODULE


def test_scan_lists_findings_and_writes_nothing(project: Path) -> None:
    result = invoke("scan", ".")
    assert result.exit_code == 1
    assert "train.py:3: NPU101 [high]" in result.stdout  # a pipe: one finding a line (tests/test_output.py)
    assert "device" in invoke("scan", ".", "--format", "text").stdout  # the table's totals per domain
    assert (project / "train.py").read_text() == CUDA_MODULE
    assert invoke("scan", "clean.py").exit_code == 0


def test_select_ignore_and_min_confidence(project: Path) -> None:
    (project / "train.py").write_text('import torch\nDEVICE = "cuda"\nx = t.cuda()\n')
    only_settings = invoke("apply", "train.py", "--dry-run", "--select", "NPU104").stdout
    assert '+DEVICE = "npu"' in only_settings and "t.npu()" not in only_settings
    ignored = invoke("apply", "train.py", "--dry-run", "--ignore", "NPU104").stdout
    assert '+DEVICE = "npu"' not in ignored and "t.npu()" in ignored
    high = invoke("apply", "train.py", "--dry-run", "--min-confidence", "high").stdout
    assert '+DEVICE = "npu"' not in high and "t.npu()" in high  # NPU104 is medium


@pytest.mark.parametrize("args", [("--select", "NPU999"), ("--min-confidence", "sure"), ("--jobs", "-1")])
def test_usage_errors_exit_2(project: Path, args: tuple[str, ...]) -> None:
    result = invoke("apply", ".", "--dry-run", *args)
    assert result.exit_code == 2


def test_missing_path_exits_2(project: Path) -> None:
    assert invoke("scan", "nope").exit_code == 2


def test_rules_and_explain() -> None:
    listing = invoke("rules").stdout
    assert "NPU101" in listing and "cuda-method" in listing
    doc = invoke("explain", "npu101")
    assert doc.exit_code == 0 and "Before" in doc.stdout and ".npu(" in doc.stdout
    assert invoke("explain", "NPU999").exit_code == 2


def test_parallel_run_matches_sequential(project: Path) -> None:
    for i in range(40):
        (project / f"m{i}.py").write_text(CUDA_MODULE if i % 2 else "x = 1\n")
    sequential = invoke("apply", ".", "--dry-run", "--jobs", "1").stdout
    parallel = invoke("apply", ".", "--dry-run", "--jobs", "2").stdout
    assert sequential == parallel and sequential.count("+++ ") == 21


def test_libcst_runner_gives_the_same_port(project: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "-x",
            "--no-format",
            "ascend_port.port.libcst_command.PortToNpuCommand",
            "train.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (project / "train.py").read_text() == PORTED_MODULE
