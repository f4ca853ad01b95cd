"""README's first contact (issue 20, "First contact and CI"): the set-up commands, the slow marker that its
text names, and the LibCST runner's command, each run as written."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
# The packages of the test extra (pyproject's [project.optional-dependencies] test) and jsonschema (the SARIF test's
# validator): running the tool must not need any of them.
TEST_ONLY = ("pytest", "hypothesis", "hypothesmith", "pexpect", "jsonschema", "transformers", "accelerate", "torch")


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", text, re.DOTALL)


def test_setup_has_two_commands_and_the_first_installs_no_extras() -> None:
    first, tests = _bash_blocks(_section("Set-up"))
    install = re.search(r"pip install (.*?) &&", first).group(1).split()
    assert install == ["-q", "-e", "."]  # the tool alone: no [test], no [lint], no torch
    assert first.endswith("ascend-port apply examples/cuda_trainer --dry-run --exit-zero")
    assert "'.[test,lint]'" in tests and tests.endswith("python -m pytest")


def test_the_first_command_runs_without_the_test_packages() -> None:
    """What the first command runs, in a process that reports which packages it imported: none of the test extra
    (a fresh virtualenv with `pip install -e .` only has none of them; checked by hand in /tmp, about 20 s)."""
    first = _bash_blocks(_section("Set-up"))[0]
    argv = shlex.split(first.rsplit("&& ", 1)[1])
    assert argv[0] == ".venv/bin/ascend-port"
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('IMPORTED', sorted({{m.split('.')[0] for m in sys.modules}} & {set(TEST_ONLY)!r}),"
        " file=sys.stderr))\n"
        f"sys.argv = {['ascend-port', *argv[1:], '--no-cache']!r}\n"
        "from ascend_port.cli import main\nmain()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "+import torch_npu" in result.stdout
    assert "IMPORTED []" in result.stderr


# --- the slow marker -----------------------------------------------------------------------------------------------


def test_slow_marker_is_registered_and_named_in_the_readme(pytestconfig: pytest.Config) -> None:
    assert any(line.startswith("slow:") for line in pytestconfig.getini("markers"))
    setup = _section("Set-up")
    assert 'pytest -m "not slow"' in setup
    assert len(_bash_blocks(setup)) == 2  # the fast run is told in the prose, not as a third set-up command


def test_slow_modules_are_marked_and_the_fast_subset_keeps_most_tests() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not slow"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    fast = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    for module in (
        "tests/test_real_multidevice.py",
        "tests/test_emulate_ops.py",
        "tests/test_triton_ascend.py",
        "tests/test_training_equivalence.py",
    ):
        assert module not in fast, module
    assert "tests/test_golden.py" in fast and "tests/test_readme.py" in fast
    selected, deselected = map(
        int, re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", result.stdout).group(1, 3)
    )
    assert selected > 2 * deselected  # most tests stay in the fast subset


# --- LibCST's runner -----------------------------------------------------------------------------------------------


def _apply(folder: Path, *options: str) -> None:
    cli = [sys.executable, "-c", "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"]
    subprocess.run([*cli, "apply", ".", "--no-git", "-q", *options], cwd=folder, check=True, capture_output=True)


@pytest.mark.parametrize("target", [None, "2.5.1"])
def test_libcst_runner_command_ports_like_apply(tmp_path: Path, target: str | None) -> None:
    """README's command, as written (the folder aside), on a copy of the example: it needs no black and no
    `.libcst.codemod.yaml`, and its Python files come out as `ascend-port apply --no-git` writes them for the same
    target release (the newest by default; the example pins torch 2.5.1, which `apply` infers)."""
    from ascend_port.core import npu_api

    command = next(line for line in README.splitlines() if line.startswith("python -m libcst.tool codemod"))
    argv = shlex.split(command)
    assert "--no-format" in argv and argv[-1] == "src/"
    example = ROOT / "examples" / "cuda_trainer"
    codemod, ported = tmp_path / "codemod" / "src", tmp_path / "apply"
    shutil.copytree(example, codemod)
    shutil.copytree(example, ported)
    extra = ["--torch-npu", target] if target else []
    result = subprocess.run(
        [sys.executable, *argv[1:], *extra], cwd=codemod.parent, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Failed to codemod 0 files." in result.stderr
    train = (codemod / "train.py").read_text()
    assert "import torch_npu\n" in train and ".cuda(" not in train
    _apply(ported, *([] if target else ["--torch-npu", npu_api.newest_release()]))
    python_files = sorted(p.relative_to(example) for p in example.rglob("*.py"))
    assert len(python_files) >= 3
    for name in python_files:
        assert (codemod / name).read_text() == (ported / name).read_text(), name


def test_the_emulator_example_runs_as_pasted(tmp_path: Path) -> None:
    """The Emulator section's first command block, pasted into a shell at the repository's root (its copy of the
    bundled example goes to a temporary folder here): the port, then three training steps of its tiny config
    under the emulator (issue 32: the README's emulate line used a flag the example does not have)."""
    pytest.importorskip("torch")
    pytest.importorskip("yaml")
    block = _bash_blocks(_section("Emulator"))[0]
    assert "/tmp/cuda_trainer" in block
    script = block.replace("/tmp/cuda_trainer", str(tmp_path / "cuda_trainer"))
    bin_dir = str(Path(sys.executable).parent)  # `ascend-port` and `python` as the virtualenv has them
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-ec", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "step 3 | loss" in result.stderr and "ascend-port emulate: exit code 0" in result.stderr
