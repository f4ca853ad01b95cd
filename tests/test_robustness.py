"""Awkward files and hostile trees: the tool never crashes, never corrupts a file, never writes where it should not,
and never runs the code it ports. (BOM, CRLF, latin-1 cookies, tabs, no final newline, Python 2, NUL bytes, links
out of the tree, gitignore and mode 0755 are in test_cli.py.)"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.run.cache import MAGIC, cache_root

runner = CliRunner()
CUDA_MODULE = "import torch\n\nx = torch.ones(2).cuda()\n"
PORTED_MODULE = "import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\n"
EXE = Path(sys.executable).with_name("ascend-port")


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


# --- awkward contents -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"\r\n",
        b"\xef\xbb\xbf",
        b"   \n\t\n",
        b"# x.cuda()\n",
        b'"""torch.cuda.synchronize()"""\n',
        b"\x0c\n",
        b"\\\n",
    ],
)
def test_empty_and_trivial_files_are_left_alone(tree: Path, data: bytes) -> None:
    (tree / "mod.py").write_bytes(data)
    result = invoke("apply", ".", "--no-git")
    assert result.exit_code in (0, 2)  # a lone backslash is a syntax error: reported, never a crash
    assert (tree / "mod.py").read_bytes() == data
    assert invoke("scan", ".").exit_code in (0, 2)


# Files whose lines Python, git and str.splitlines count differently; each is ported as Python reads it, and the
# --dry-run diff applies with `git apply` to exactly what --no-git writes.
AWKWARD = {
    "mixed endings": (
        b"import torch\r\nx = 1\ny = t.cuda()\r\nz = 2\rw = t.cuda()\n",
        b"import torch\r\nimport torch_npu\r\nx = 1\ny = t.npu()\r\nz = 2\rw = t.npu()\n",
    ),
    "CR only": (b"import torch\rx = t.cuda()\r", b"import torch\rimport torch_npu\rx = t.npu()\r"),
    "form feed": (
        b"import torch\n\x0c\ndef f(t):\n    return t.cuda()\n\x0c\ny = t.cuda()\n",
        b"import torch\nimport torch_npu\n\x0c\ndef f(t):\n    return t.npu()\n\x0c\ny = t.npu()\n",
    ),
    "line separators in strings": (
        'import torch\ns = "a\u2028b\x85c\x1cd"\nx = t.cuda()\n'.encode(),
        'import torch\nimport torch_npu\ns = "a\u2028b\x85c\x1cd"\nx = t.npu()\n'.encode(),
    ),
    "CR inside a line of CRLF": (
        b"import torch\r\n# a\rb\r\nx = t.cuda()\r\n",
        b"import torch\r\nimport torch_npu\r\n# a\rb\r\nx = t.npu()\r\n",
    ),
    "removed line starting with --": (b"import torch\nx = --y\nz = t.cuda()", None),
}


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_line_endings_port_and_diff_exactly(tree: Path, name: str) -> None:
    data, expected = AWKWARD[name]
    (tree / "mod.py").write_bytes(data)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    diff = subprocess.run([str(EXE), "apply", "mod.py", "--dry-run"], cwd=tree, capture_output=True).stdout
    assert invoke("apply", "mod.py", "--no-git").exit_code == 0
    ported = (tree / "mod.py").read_bytes()
    if expected is not None:
        assert ported == expected
    assert ported != data
    ast.parse(ported)
    (tree / "mod.py").write_bytes(data)
    (tree / "port.diff").write_bytes(diff)
    subprocess.run(["git", "apply", "port.diff"], cwd=tree, check=True)
    assert (tree / "mod.py").read_bytes() == ported
    assert invoke("apply", "mod.py", "--dry-run").exit_code == 0  # a second run changes nothing


def test_a_200000_line_module_is_ported_exactly(tree: Path) -> None:
    blocks = []
    for i in range(50_000):
        call = ".cuda()" if i % 100 == 0 else ".float()"
        blocks.append(f"def f{i}(x):\n    y = x + {i}\n    return y{call}\n\n")
    source = "import torch\n" + "".join(blocks)
    assert source.count("\n") >= 200_000
    (tree / "big.py").write_text(source)
    result = invoke("apply", "big.py", "--no-git")
    assert result.exit_code == 0, result.stderr
    expected = source.replace("import torch\n", "import torch\nimport torch_npu\n", 1).replace(".cuda()", ".npu()")
    assert (tree / "big.py").read_text() == expected
    assert invoke("apply", "big.py", "--dry-run").exit_code == 0


def test_undecodable_source_is_reported_by_name(tree: Path) -> None:
    (tree / "bad.py").write_bytes(b"x = '\xff\xfe'\ny = t.cuda()\n")
    (tree / "train.py").write_text(CUDA_MODULE)
    result = invoke("apply", ".", "--no-git")
    assert result.exit_code == 2
    assert "bad.py" in result.stderr and "decode" in result.stderr
    assert (tree / "bad.py").read_bytes() == b"x = '\xff\xfe'\ny = t.cuda()\n"
    assert (tree / "train.py").read_text() == PORTED_MODULE


def test_file_names_that_are_not_utf8(tree: Path) -> None:
    """The diff names the file by its bytes, so `git apply` finds it; errors name it without crashing the output."""
    name = os.fsdecode(b"caf\xe9.py")
    (tree / name).write_text(CUDA_MODULE)
    (tree / os.fsdecode(b"old\xff.py")).write_text("print 'x'\ny = t.cuda()\n")
    result = subprocess.run([str(EXE), "apply", ".", "--dry-run"], cwd=tree, capture_output=True)
    assert result.returncode == 2
    assert b"+++ b/caf\xe9.py\n" in result.stdout
    assert b"old" in result.stderr and b"Traceback" not in result.stderr
    result = subprocess.run([str(EXE), "apply", ".", "--no-git"], cwd=tree, capture_output=True)
    assert (tree / name).read_text() == PORTED_MODULE


def test_special_files_named_py_are_not_read(tree: Path) -> None:
    os.mkfifo(tree / "pipe.py")  # reading it would block for ever
    (tree / "train.py").write_text(CUDA_MODULE)
    result = subprocess.run([str(EXE), "apply", ".", "--no-git"], cwd=tree, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (tree / "train.py").read_text() == PORTED_MODULE
    assert stat.S_ISFIFO((tree / "pipe.py").lstat().st_mode)


# --- permissions and modes --------------------------------------------------------------------------------------


def test_an_unreadable_file_is_reported_and_the_run_goes_on(tree: Path) -> None:
    """Root reads every file, so as root the tool runs without the capabilities that let it (setpriv): the
    permission check is the kernel's, not a simulation."""
    (tree / "secret.py").write_text(CUDA_MODULE)
    (tree / "secret.py").chmod(0)
    (tree / "train.py").write_text(CUDA_MODULE)
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file permissions cannot be enforced")
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
        probe = subprocess.run([*prefix, "cat", str(tree / "secret.py")], capture_output=True)
        if probe.returncode == 0:
            pytest.skip("file permissions are not enforced here")
    try:
        result = subprocess.run(
            [*prefix, str(EXE), "apply", ".", "--no-git"], cwd=tree, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 2, result.stderr
        assert "secret.py" in result.stderr and "cannot read" in result.stderr
        assert (tree / "train.py").read_text() == PORTED_MODULE
    finally:
        (tree / "secret.py").chmod(0o600)
    assert (tree / "secret.py").read_text() == CUDA_MODULE


# (a read-only file is refused, as black and ruff do: tests/test_no_lost_work.py)
@pytest.mark.parametrize("mode", [0o755, 0o750, 0o700, 0o644, 0o640, 0o600, 0o2755])
def test_file_mode_is_kept(tree: Path, mode: int) -> None:
    (tree / "run.py").write_text(CUDA_MODULE)
    (tree / "run.py").chmod(mode)
    assert invoke("apply", ".", "--no-git").exit_code == 0
    assert (tree / "run.py").read_text() == PORTED_MODULE
    assert stat.S_IMODE((tree / "run.py").stat().st_mode) == mode


# --- symlinks ---------------------------------------------------------------------------------------------------


def test_a_link_inside_the_tree_is_ported_once_through_its_target(tree: Path) -> None:
    (tree / "pkg").mkdir()
    (tree / "pkg" / "real.py").write_text(CUDA_MODULE)
    os.symlink("pkg/real.py", tree / "link.py")
    os.symlink("pkg", tree / "pkg_link")
    diff = invoke("apply", ".", "--dry-run").stdout
    assert diff.count("+++ ") == 1 and "+++ b/pkg/real.py" in diff
    # Naming the link, or the link and its target, ports the target once.
    diff = invoke("apply", "link.py", "pkg/real.py", "pkg_link/real.py", "--dry-run").stdout
    assert diff.count("+++ ") == 1 and "+++ b/pkg/real.py" in diff
    assert invoke("apply", "link.py", "--no-git").exit_code == 0
    assert os.readlink(tree / "link.py") == "pkg/real.py" and os.readlink(tree / "pkg_link") == "pkg"
    assert (tree / "pkg" / "real.py").read_text() == PORTED_MODULE
    assert invoke("apply", ".", "--dry-run").exit_code == 0


# --- where the tool writes --------------------------------------------------------------------------------------


def _state(root: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every path under root (links not followed) with its type, mode, target or content hash, and mtime."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            what = ("link", os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            what = ("dir",)
        else:
            what = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
        out[str(path.relative_to(root))] = (*what, info.st_mode, info.st_mtime_ns)
    return out


def test_nothing_is_written_outside_the_tree_and_its_report_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.py").write_text(CUDA_MODULE)
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "train.py").write_text(CUDA_MODULE)
    os.symlink(outside, tree / "src" / "outside_dir")
    os.symlink(outside / "other.py", tree / "src" / "other.py")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    before = _state(tmp_path, skip=tree)
    for args in (
        ["scan", str(tree)],
        ["apply", str(tree), "--dry-run"],
        ["apply", str(tree), "--check"],
        ["apply", str(tree), "--no-git"],
    ):
        assert invoke(*args).exit_code in (0, 1), args
    subprocess.run([*git, "checkout", "-q", "--", "."], check=True)
    assert invoke("apply", str(tree)).exit_code == 0  # the git workflow: a branch and a report in tree/.ascend-port
    assert _state(tmp_path, skip=tree) == before
    assert (tree / "src" / "train.py").read_text() == PORTED_MODULE
    assert (outside / "other.py").read_text() == CUDA_MODULE
    written = [p for p in tree.rglob("*") if ".git" not in p.parts and p.is_file() and not p.is_symlink()]
    assert {p.relative_to(tree).parts[0] for p in written} <= {"src", ".ascend-port"}
    # The one folder outside the tree the tool writes is its cache: result entries, and the reports' import index.
    cached = [p for p in cache_root().rglob("*") if p.is_file()]
    assert all(p.read_bytes().startswith(MAGIC) or re.fullmatch(r"imports-\d+\.json", p.name) for p in cached)


# --- never runs the code it ports -------------------------------------------------------------------------------

BOOBY_TRAP = """import pathlib
pathlib.Path({marker!r}).write_text("executed")
raise SystemExit("imported {name}")
"""


def test_the_ported_code_is_never_imported_or_run(tmp_path: Path) -> None:
    """Modules that would leave a marker file when imported or run, including ones that shadow what the tool and
    the code import (torch, libcst, typer), start-up hooks and build scripts. The tool runs with the tree as its
    working directory, as a user runs it."""
    tree = tmp_path / "tree"
    markers = tmp_path / "markers"
    (tree / "pkg").mkdir(parents=True)
    markers.mkdir()
    names = [
        "train.py",
        "torch.py",
        "torch_npu.py",
        "libcst.py",
        "typer.py",
        "sitecustomize.py",
        "usercustomize.py",
        "conftest.py",
        "setup.py",
        "pkg/__init__.py",
        "pkg/__main__.py",
        "pkg/models.py",
    ]
    for name in names:
        trap = BOOBY_TRAP.format(marker=str(markers / name.replace("/", "_")), name=name)
        (tree / name).write_text(trap + CUDA_MODULE)
    (tree / "ascend_port_plugins.py").write_text(BOOBY_TRAP.format(marker=str(markers / "plugins"), name="plugins"))
    env = {**os.environ, "PYTHONPATH": ""}
    # (--other-devices drop: a module named torch_npu.py would otherwise read as the project's own NPU support)
    for args in (["scan", "."], ["apply", ".", "--dry-run"], ["apply", ".", "--no-git", "--other-devices", "drop"]):
        result = subprocess.run([str(EXE), *args], cwd=tree, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode in (0, 1, 2), result.stderr
        assert "Traceback" not in result.stderr
    assert not list(markers.iterdir())
    assert "torch.ones(2).npu()" in (tree / "pkg" / "models.py").read_text()
