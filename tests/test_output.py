"""What `scan` and `apply` print, in a pipe (a CI log) and on a terminal: the concise format (one finding a line)
and when the table is chosen, lines never hard-wrapped, -q/-v/--color (NO_COLOR, FORCE_COLOR), -h/-V, the list of
files written, the warning when no file was found, progress lines in a log, and information (NPU407) that is not
work. The terminal cases run the real command on a pseudo-terminal of a given width (COLUMNS)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port import __version__
from ascend_port.cli import app
from ascend_port.cli import common as cli_common

CUDA_MODULE = "import torch\n\nx = torch.ones(2).cuda()\n"
# NPU107's message is long (over 80 columns): it must stay on one line
LONG_MESSAGE_MODULE = "import torch\n\nused = torch.cuda.memory_usage()\n"
SDPA_ONLY = (
    "import torch.nn.functional as F\n\n\n"
    "def attention(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CONCISE_LINE = re.compile(r"^(?P<path>\S+):(?P<line>\d+): (?P<rule>NPU\d{3}) \[(?P<level>high|medium|low|info)\] \S")


def invoke(*args: str, **env: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80", **env}, catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "train.py").write_text(CUDA_MODULE)
    (tmp_path / "a_rather_long_folder_name" / "and_a_long_subfolder").mkdir(parents=True)
    (tmp_path / "a_rather_long_folder_name" / "and_a_long_subfolder" / "memory_statistics.py").write_text(
        LONG_MESSAGE_MODULE
    )
    return tmp_path


def on_terminal(cwd: Path, *args: str, columns: int) -> str:
    """The command's output on a pseudo-terminal ``columns`` wide (stdout and stderr both), colour off."""
    command = [sys.executable, "-c", "from ascend_port.cli import main; main()", *args, "--color", "never"]
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "30", "TERM": "xterm"}
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    leader, follower = pty.openpty()
    with subprocess.Popen(command, cwd=cwd, env=env, stdin=follower, stdout=follower, stderr=follower) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # (the terminal is closed once the command exits)
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=60)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")


# --- the concise format and the table ---------------------------------------------------------------------------


def test_concise_is_the_default_in_a_pipe_one_finding_a_line(project: Path) -> None:
    result = invoke("scan", ".")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    findings = [line for line in lines if CONCISE_LINE.match(line)]
    assert findings == lines[:-1] and len(findings) == 3, result.stdout  # then the summary line, nothing else
    long_line = next(line for line in findings if "NPU107" in line)
    assert long_line.startswith("a_rather_long_folder_name/and_a_long_subfolder/memory_statistics.py:3: NPU107 [low] ")
    assert len(long_line) > 80 and long_line.endswith("port by hand")  # one line, however narrow the terminal
    assert "train.py:3: NPU101 [high] .cuda() -> .npu()" in lines
    assert lines[-1].startswith("2 files checked, 2 to change: ")
    assert "┃" not in result.stdout and "│" not in result.stdout  # no table


def test_the_table_is_still_there_on_request_and_in_a_file(project: Path) -> None:
    table = invoke("scan", ".", "--format", "text", COLUMNS="200")
    assert "location" in table.stdout and "train.py:3" in table.stdout and "per domain" in table.stdout
    concise = invoke("scan", ".", "--output", "findings.txt")
    assert concise.stdout == "" and concise.exit_code == 1
    written = (project / "findings.txt").read_text().splitlines()
    assert len(written) == 3 and all(CONCISE_LINE.match(line) for line in written)


def test_a_wide_terminal_gets_the_table_a_narrow_one_concise_lines(project: Path) -> None:
    (project / "a_rather_long_folder_name").rename(project / "short")  # file:line fits beside the message
    wide = on_terminal(project, "scan", ".", columns=120)
    assert "location" in wide and "┃" in wide and "per domain" in wide
    assert re.search(r"short/and_a_long_subfolder/memory_statistics\.py:3 +│ NPU107 │ low", wide), wide
    assert "2 files checked, 2 to change" in wide
    narrow = on_terminal(project, "scan", ".", columns=80)
    assert "┃" not in narrow and "train.py:3: NPU101 [high] .cuda() -> .npu()" in narrow
    assert re.search(r"memory_statistics\.py:3: NPU107 \[low\] [^\n]+port by hand\n", narrow), narrow


def test_a_path_too_long_for_the_table_gets_concise_lines_on_a_wide_terminal(project: Path) -> None:
    deep = project / ("folder_with_a_long_name_" * 3) / "models" / "a_model_with_a_long_name"
    deep.mkdir(parents=True)
    (deep / "modeling_a_model_with_a_long_name.py").write_text(CUDA_MODULE)
    output = on_terminal(project, "scan", ".", columns=120)  # 120 < its file:line (99) + the table's 27 + 40
    assert "┃" not in output
    assert "a_model_with_a_long_name/modeling_a_model_with_a_long_name.py:3: NPU101 [high]" in output


def test_errors_and_the_summary_are_never_wrapped(project: Path) -> None:
    broken = project / "a_rather_long_folder_name" / "and_a_long_subfolder" / "a_broken_module_with_a_long_name.py"
    broken.write_text("print 'cuda'\nx = y.cuda()\n")
    for args in (("scan", "."), ("scan", ".", "--format", "json"), ("apply", ".", "--dry-run")):
        result = invoke(*args, COLUMNS="40")
        assert result.exit_code == 2
        error = next(line for line in result.stderr.splitlines() if line.startswith("error:"))
        assert error.startswith(f"error: {broken.relative_to(project).as_posix()}: ") and "parse" in error
        summary = (result.stdout if args == ("scan", ".") else result.stderr).splitlines()[-1]
        assert re.fullmatch(r"3 files checked, 2 to change: \d+ rewrites?, \d+ TODOs?, 1 file with errors.*", summary)
    config_error = invoke("scan", ".", "--select", "NPU999", COLUMNS="40")
    assert config_error.exit_code == 2 and len(config_error.stderr.strip().splitlines()) == 1


# --- -q, -v, --color, -h, -V ------------------------------------------------------------------------------------


def test_quiet_prints_findings_and_errors_only(project: Path) -> None:
    (project / "skipped").mkdir()
    (project / "skipped" / "mod.py").write_text(CUDA_MODULE)
    scan = invoke("scan", ".", "-q", "--exclude", "skipped")
    assert scan.exit_code == 1 and scan.stderr == ""
    assert all(CONCISE_LINE.match(line) for line in scan.stdout.splitlines())
    assert invoke("apply", ".", "--check", "--quiet").stderr == ""
    written = invoke("apply", ".", "--no-git", "-q")
    assert written.exit_code == 0 and written.stdout == "" and written.stderr == ""
    assert "torch_npu" in (project / "train.py").read_text()


def test_verbose_names_the_configuration_every_skipped_file_and_the_time(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.ascend-port]\nexclude = ["gen"]\n')
    (project / "gen").mkdir()
    for i in range(7):
        (project / "gen" / f"m{i}.py").write_text(CUDA_MODULE)
    quiet_enough = invoke("scan", ".").stderr
    assert "7 files skipped (excluded)" in quiet_enough and "gen/m6.py" not in quiet_enough  # the first five
    verbose = invoke("scan", ".", "-v").stderr
    assert f"configuration: {project / 'pyproject.toml'}; target: torch_npu " in verbose
    assert "gen/m6.py" in verbose and "and 2 more" not in verbose
    assert re.search(r"^3 files scanned in \d+\.\d s$", verbose, re.MULTILINE), verbose
    assert re.search(r"^3 files ported in", invoke("apply", ".", "--dry-run", "--verbose").stderr, re.MULTILINE)
    assert invoke("scan", ".", "-q", "-v").exit_code == 2


@pytest.mark.parametrize(
    "args, env, coloured",
    [
        ((), {}, False),  # a pipe
        (("--color", "always"), {}, True),
        (("--color", "always"), {"NO_COLOR": "1"}, True),  # the flag wins
        ((), {"FORCE_COLOR": "1"}, True),
        ((), {"NO_COLOR": "1", "FORCE_COLOR": ""}, False),
        (("--color", "never"), {"FORCE_COLOR": "1"}, False),
    ],
)
def test_color(project: Path, args: tuple[str, ...], env: dict[str, str], coloured: bool) -> None:
    result = invoke("scan", "train.py", *args, **env)
    assert bool(ANSI.search(result.stdout)) == coloured, repr(result.stdout)
    assert ANSI.sub("", result.stdout).splitlines()[:2] == [
        "train.py:1: NPU100 [high] import torch_npu added",  # (lines of the file as scanned: reports/lines.py)
        "train.py:3: NPU101 [high] .cuda() -> .npu()",
    ]


def test_color_rejects_an_unknown_mode(project: Path) -> None:
    result = invoke("scan", ".", "--color", "sometimes")
    assert result.exit_code == 2 and "auto, always, never" in result.stderr


def test_short_help_and_version(project: Path) -> None:
    for args in (("-h",), ("scan", "-h"), ("apply", "-h")):
        result = invoke(*args)
        assert result.exit_code == 0 and "Usage" in result.stdout and "--help" in result.stdout, args
    assert all(flag in invoke("scan", "-h", COLUMNS="200").stdout for flag in ("--quiet", "--verbose", "--color"))
    for flag in ("-V", "--version"):
        result = invoke(flag)
        assert result.exit_code == 0 and result.stdout.strip() == f"ascend-port {__version__}"


# --- what a run says about itself ------------------------------------------------------------------------------


def test_apply_lists_the_files_it_ported(project: Path) -> None:
    (project / "clean.py").write_text("x = 1\n")
    result = invoke("apply", ".", "--no-git")
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert "ported train.py (2 rewrites, 0 TODOs)" in lines
    assert "ported a_rather_long_folder_name/and_a_long_subfolder/memory_statistics.py (0 rewrites, 1 TODO)" in lines
    assert lines[-1].startswith("2 files ported (3 checked): ")
    again = invoke("apply", ".", "--no-git")
    assert again.stderr.splitlines()[-1].startswith("0 files ported (3 checked): ")


def test_a_run_that_finds_no_file_warns(project: Path) -> None:
    (project / "empty").mkdir()
    result = invoke("scan", "empty")
    assert result.exit_code == 0 and "warning: no file to port under empty" in result.stderr
    excluded = invoke("apply", ".", "--dry-run", "--exclude", "*.py")
    assert excluded.exit_code == 0
    assert "warning: no file to port under . (2 left out by ignore rules or --exclude)" in excluded.stderr
    assert "warning" not in invoke("scan", "empty", "-q").stderr
    assert "warning" not in invoke("scan", ".").stderr


def test_a_long_run_prints_progress_lines_in_a_log(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        (project / f"m{i}.py").write_text(CUDA_MODULE)
    monkeypatch.setattr(cli_common, "PROGRESS_EVERY", 0.0)  # a line at every file instead of every few seconds
    scan = invoke("scan", ".", "--no-cache", "-j", "1")
    progress = [line for line in scan.stderr.splitlines() if line.startswith("scanning: ")]
    assert progress and all(re.fullmatch(r"scanning: \d+/8 files, \d+ s", line) for line in progress), scan.stderr
    assert "porting" not in scan.stderr
    dry = invoke("apply", ".", "--dry-run", "--no-cache", "-j", "1")
    assert any(line.startswith("porting: ") for line in dry.stderr.splitlines())
    assert "porting" not in invoke("scan", ".", "--no-cache", "-j", "1", "-q").stderr
    monkeypatch.setattr(cli_common, "PROGRESS_EVERY", 3600.0)  # a short run: no line at all
    assert "scanning" not in invoke("scan", ".", "--no-cache").stderr


def test_scan_says_scanning_on_a_terminal(project: Path) -> None:
    output = on_terminal(project, "scan", ".", "--no-cache", columns=120)
    assert "scanning" in output and "porting" not in output


# --- information is not work ------------------------------------------------------------------------------------


# A medium rule (NPU210 rewrites integer devices) that can only leave a TODO here: `device` is also "cpu".
MEDIUM_TODO = """\
import torch


def mixed(rank, x, use_cpu):
    device = rank % torch.cuda.device_count()
    if use_cpu:
        device = "cpu"
    return x.to(device)
"""


def test_a_todo_of_a_rule_that_rewrites_elsewhere_counts_as_a_todo(project: Path) -> None:
    """NPU210's TODO is manual work: after the port, scan finds TODOs and nothing to change, never rewrites."""
    (project / "mixed.py").write_text(MEDIUM_TODO)
    assert invoke("apply", "mixed.py", "--no-git").exit_code == 0
    result = invoke("scan", "mixed.py", "--format", "json")
    findings = json.loads(result.stdout)["findings"]
    npu210 = [f for f in findings if f["rule"] == "NPU210"]
    assert npu210 and all(f["kind"] == "todo" for f in npu210), npu210
    for cache in ((), ("--no-cache",)):  # (the result cache keeps the kind)
        summary = invoke("scan", "mixed.py", *cache).stdout.splitlines()[-1]
        assert re.fullmatch(r"1 file checked, 0 to change: 0 rewrites, \d+ TODOs?", summary), summary


def test_information_does_not_fail_a_scan_nor_count_as_a_rewrite(project: Path) -> None:
    (project / "attention.py").write_text(SDPA_ONLY)
    result = invoke("scan", "attention.py")
    assert result.exit_code == 0, result.stdout
    first, summary = result.stdout.splitlines()
    assert first.startswith("attention.py:5: NPU407 [high] info: scaled_dot_product_attention runs natively")
    assert summary == "1 file checked, 0 to change: 0 rewrites, 0 TODOs, 1 note (nothing to do)"
    for fmt in ("json", "github", "sarif", "text"):
        assert invoke("scan", "attention.py", "--format", fmt).exit_code == 0, fmt
    table = invoke("scan", "attention.py", "--format", "text", COLUMNS="200").stdout
    assert "info" in table and "per domain" not in table  # no rewrite, no TODO to total
    assert invoke("scan", ".").exit_code == 1  # real work elsewhere still fails it


@pytest.mark.parametrize("verbose", [(), ("-v",)])
def test_binary_python_files_are_named_as_skipped_not_counted_as_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verbose: tuple[str, ...]
) -> None:
    """A `.py` that is binary (NUL bytes) is skipped: it was counted as checked and named nowhere (issue 32)."""
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("import torch\nx = torch.ones(1).cuda()\n", "utf-8")
    Path("blob.py").write_bytes(b"ab\0cd")
    result = invoke("scan", ".", *verbose)
    assert "1 file skipped (binary file: contains NUL bytes): blob.py" in result.stderr.splitlines(), result.stderr
    summary = result.output.splitlines()[-1]
    assert summary.startswith("1 file checked, 1 to change"), summary


def test_todo_totals_say_how_many_are_comments_as_todos_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CUDA source's finding is a TODO with no comment (it is reported, not written): `apply` said 2 TODOs where
    `todos` then found 1 (issue 32). The totals say how many are comments, the number `todos` finds."""
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("import torch\n\ncap = torch.cuda.get_device_capability()\n", "utf-8")
    Path("k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n", "utf-8")
    summary = invoke("scan", ".").output.splitlines()[-1]
    assert summary.endswith(": 2 rewrites, 2 TODOs (1 of them as a comment in the code)"), summary
    applied = invoke("apply", ".", "--no-git")
    assert applied.stderr.splitlines()[-1].endswith("2 TODOs (1 of them as a comment in the code)"), applied.stderr
    assert invoke("todos", ".").output.splitlines()[-1].startswith("1 TODO in 1 file")
