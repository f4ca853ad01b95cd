"""`ascend-port run` (ascend_port/onthefly/): the project's modules ported in memory as the program imports them.

The import side is tested on hand-made ports (prepare() of a RunResult whose new texts the test writes), so that
each property is seen alone: the ported text runs, under the real file's name and lines; a module the port creates
is found; the main script, ``-m``, spawned workers and a shadowed sitecustomize; nothing is written beside the user's
files. The command line is tested end to end with a rewrite that needs no torch_npu (the CUDA_VISIBLE_DEVICES
variable), and under the emulator on the bundled example: the same losses as the permanent port, no file changed,
with torchrun's two processes too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from emulation import CLI, needs_compiler
from emulation import environment as emulator_environment

from ascend_port.core.findings import FileResult
from ascend_port.emulate.runner import UsageError
from ascend_port.onthefly.command import RUNNER, launch_command
from ascend_port.onthefly.launch import environment
from ascend_port.onthefly.prepare import line_map, prepare
from ascend_port.run.engine import RunResult

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cuda_trainer"


# --- the line map: a ported line stands for the real line it came from ---------------------------------------------


def test_inserted_lines_stand_for_the_line_they_precede_and_equal_lines_for_themselves() -> None:
    old = "import torch\nx = 1\ny = torch.cuda.is_available()\n"
    new = "import torch\nimport torch_npu\nx = 1\ny = torch.npu.is_available()\n"
    lines, changed = line_map(old, new)
    assert lines == [1, 2, 2, 3]
    assert changed == [2, 4]


def test_a_replaced_block_maps_line_by_line_and_its_extra_lines_to_its_last() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB1\nB2\nB3\nd\n"
    assert line_map(old, new) == ([1, 2, 3, 3, 4], [2, 3, 4])


# --- the import side, on hand-made ports ----------------------------------------------------------------------------


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _project(tmp_path: Path, files: dict[str, tuple[str, str | None]], created: dict[str, str] | None = None):
    """Write each file's original text; port it to its new text (None: unchanged). Returns the project folder and
    the environment of a process of the program."""
    project = tmp_path / "project"
    result = RunResult([])
    for name, (old, new) in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(old, "utf-8")
        result.files.append(FileResult(str(path), new_bytes=None if new is None else new.encode()))
    for name, text in (created or {}).items():
        result.files.append(FileResult(str(project / name), new_bytes=text.encode()))
        result.created.add(str(project / name))
    scratch = tmp_path / "scratch"
    (scratch / "reports").mkdir(parents=True)
    prepared = prepare(result, scratch)
    return project, environment(prepared.manifest, scratch / "reports")


def _python(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


MAIN_OLD = "import sys\nfrom pkg import mod\nprint('main', 'cuda', sys.argv[1:], mod.where())\n"
MAIN_NEW = "import sys\nfrom pkg import mod\nprint('main', 'npu', sys.argv[1:], mod.where())\n"
MOD_OLD = "def where():\n    return 'cuda'\n\n\ndef fail():\n    raise ValueError('from mod')\n"
MOD_NEW = "# TODO(ascend-port): NPU999 a comment the port wrote\nimport os\n\n\ndef where():\n    return 'npu'\n\n\ndef fail():\n    raise ValueError('from mod')\n"  # noqa: E501


def test_the_main_script_and_its_imports_run_ported_under_their_real_names(tmp_path: Path) -> None:
    project, env = _project(
        tmp_path, {"main.py": (MAIN_OLD, MAIN_NEW), "pkg/__init__.py": ("", None), "pkg/mod.py": (MOD_OLD, MOD_NEW)}
    )
    before = _digest(project)
    result = _python([str(RUNNER), "main.py", "--lr", "1"], project, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "main npu ['--lr', '1'] npu\n"
    assert _digest(project) == before  # no file written, no bytecode of the ported text beside the user's
    served = json.loads(next((tmp_path / "scratch" / "reports").glob("*.json")).read_text())["served"]
    assert sorted(Path(p).name for p in served) == ["main.py", "mod.py"]


def test_a_traceback_names_the_real_file_and_line(tmp_path: Path) -> None:
    main = "from pkg import mod\nmod.fail()\n"
    project, env = _project(
        tmp_path, {"main.py": (main, None), "pkg/__init__.py": ("", None), "pkg/mod.py": (MOD_OLD, MOD_NEW)}
    )
    result = _python([str(RUNNER), "main.py"], project, env)
    assert result.returncode == 1
    # mod.fail raises on line 6 of the real file (line 10 of the ported text); the real line's text is shown
    assert f'File "{project / "pkg" / "mod.py"}", line 6, in fail' in result.stderr, result.stderr
    assert "raise ValueError('from mod')" in result.stderr
    assert "_ascend_port_run.py" not in result.stderr  # (the runner's own frames are not the user's)
    assert result.stderr.rstrip().endswith("ValueError: from mod")


def test_an_error_on_a_changed_line_is_shown_without_a_misplaced_caret(tmp_path: Path) -> None:
    old = "x = 1\ny = undefined_cuda_name + x\n"
    new = "x = 1\ny = undefined_npu_name_longer + x\n"
    project, env = _project(tmp_path, {"main.py": (old, new)})
    result = _python([str(RUNNER), "main.py"], project, env)
    assert 'main.py", line 2, in <module>' in result.stderr
    assert "y = undefined_cuda_name + x" in result.stderr  # the real line
    assert "^" not in result.stderr  # the columns of the ported text would point at the wrong characters


def test_a_module_the_port_creates_is_imported_from_its_text(tmp_path: Path) -> None:
    main = "print('plain')\n"
    ported = "from pkg import _npu_helpers\nprint(_npu_helpers.NAME)\n"
    project, env = _project(
        tmp_path,
        {"main.py": (main, ported), "pkg/__init__.py": ("", None)},
        created={"pkg/_npu_helpers.py": "NAME = 'created by the port'\n"},
    )
    result = _python([str(RUNNER), "main.py"], project, env)
    assert result.stdout == "created by the port\n", result.stderr
    assert not (project / "pkg" / "_npu_helpers.py").exists()


def test_minus_m_runs_the_module_ported_with_the_working_directory_on_the_path(tmp_path: Path) -> None:
    old = "import sys\nprint(__name__, 'cuda', sys.argv[1:])\n"
    new = "import sys\nprint(__name__, 'npu', sys.argv[1:])\n"
    project, env = _project(tmp_path, {"pkg/__init__.py": ("", None), "pkg/cli.py": (old, new)})
    result = _python([str(RUNNER), "-m", "pkg.cli", "x"], project, env)
    assert result.stdout == "__main__ npu ['x']\n", result.stderr


def test_a_spawned_worker_reruns_the_ported_main_script(tmp_path: Path) -> None:
    """DataLoader workers and torch.multiprocessing.spawn start a fresh Python that runs the main script again by
    its path: the ported one, as in the parent."""
    old = (
        "import multiprocessing as mp\n"
        "DEVICE = 'cuda'\n"
        "def work(_):\n    return DEVICE\n"
        "if __name__ == '__main__':\n"
        "    with mp.get_context('spawn').Pool(1) as pool:\n        print(pool.map(work, [0]))\n"
    )
    project, env = _project(tmp_path, {"main.py": (old, old.replace("'cuda'", "'npu'"))})
    result = _python([str(RUNNER), "main.py"], project, env)
    assert result.stdout == "['npu']\n", result.stderr


def test_the_sitecustomize_it_shadows_still_runs(tmp_path: Path) -> None:
    project, env = _project(tmp_path, {"main.py": ("print('cuda')\n", "print('npu')\n")})
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS_RAN'] = '1'\n")
    env["PYTHONPATH"] += os.pathsep + str(theirs)
    result = _python(
        ["-c", "import os, sys; print(os.environ.get('THEIRS_RAN'), sys.modules['sitecustomize'].__file__)"],
        project,
        env,
    )
    ran, module = result.stdout.split()
    assert ran == "1", result.stderr
    assert module == str(theirs / "sitecustomize.py")
    assert "Error in sitecustomize" not in result.stderr


# --- the command: what `run` launches ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "launched"),
    [
        (["python", "train.py", "--lr", "1"], ["{runner}", "train.py", "--lr", "1"]),
        (["python", "-u", "-W", "ignore", "train.py"], ["-u", "-W", "ignore", "{runner}", "train.py"]),
        (["python", "-um", "pkg.cli", "x"], ["-u", "{runner}", "-m", "pkg.cli", "x"]),
        (["python", "-mpkg.cli"], ["{runner}", "-m", "pkg.cli"]),
        (["-m", "pkg.cli"], ["{runner}", "-m", "pkg.cli"]),
        (["python", "-c", "import pkg"], ["-c", "import pkg"]),  # (the code is no file; its imports are ported)
        (["python", "-m", "pytest", "-q"], ["{runner}", "-m", "pytest", "--assert=plain", "-q"]),
    ],
)
def test_the_main_script_or_module_is_run_by_the_runner(command: list[str], launched: list[str]) -> None:
    argv, interpreter, _ = launch_command(command)
    assert argv[1:] == [str(RUNNER) if word == "{runner}" else word for word in launched]


def test_pytest_keeps_an_assert_mode_the_user_chose() -> None:
    argv, _, notes = launch_command(["python", "-m", "pytest", "--assert=rewrite", "tests"])
    assert argv[-2:] == ["--assert=rewrite", "tests"] and not notes


def test_torchrun_runs_the_runner_in_each_worker_where_its_parser_puts_the_script() -> None:
    pytest.importorskip("torch")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port=0",
        "train.py",
        "--nproc-per-node",
        "9",
    ]
    argv, _, _ = launch_command(command)
    assert argv[3:] == ["--nproc-per-node", "2", "--master-port=0", str(RUNNER), "train.py", "--nproc-per-node", "9"]
    argv, _, _ = launch_command([sys.executable, "-m", "torch.distributed.run", "--standalone", "-m", "pkg.train", "a"])
    assert argv[3:] == ["--standalone", str(RUNNER), "-m", "pkg.train", "a"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["python", "-"], "standard input"),
        (["python"], "nothing to run"),
        (["ls", "-l"], "not a supported command"),
    ],
)
def test_a_command_run_cannot_port_is_refused_with_the_reason(command: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        launch_command(command)


def test_torchrun_without_python_is_refused() -> None:
    pytest.importorskip("torch")
    with pytest.raises(UsageError, match="not Python"):
        launch_command([sys.executable, "-m", "torch.distributed.run", "--no-python", "./run.sh"])


# --- the command line, end to end ----------------------------------------------------------------------------------


def _cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


ENV_SCRIPT = (
    "import os, sys\n"
    "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
    "print(sorted(k for k in os.environ if k.endswith('VISIBLE_DEVICES')))\n"
    "sys.exit(int(sys.argv[1]))\n"
)


def test_run_ports_in_memory_reports_and_exits_with_the_programs_code(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(ENV_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.endswith("VISIBLE_DEVICES")}
    result = _cli(["run", "--no-cache", "--report", "r.json", "--", sys.executable, "main.py", "3"], tmp_path, env)
    assert result.returncode == 3, result.stderr
    assert result.stdout == "['ASCEND_RT_VISIBLE_DEVICES']\n"
    assert (tmp_path / "main.py").read_text() == ENV_SCRIPT
    assert "1 module ported on the fly" in result.stderr
    assert "to make the port permanent: ascend-port apply ." in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["exit_code"] == 3
    assert [m["path"] for m in report["imported"]] == ["main.py"]
    assert report["imported"][0]["rewrites"] == 1


def test_run_of_a_project_the_port_leaves_alone_says_so(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print('hello')\n")
    result = _cli(["run", "-q", "--", sys.executable, "main.py"], tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "hello\n", "")
    result = _cli(["run", "--", sys.executable, "main.py"], tmp_path)
    assert "the port changes no Python module of the project" in result.stderr


def test_run_refuses_what_it_cannot_launch_before_porting(tmp_path: Path) -> None:
    result = _cli(["run", "--", "ls"], tmp_path)
    assert result.returncode == 2
    assert "not a supported command" in result.stderr
    result = _cli(["run", "--include", "no_such_package_xyz", "--", sys.executable, "main.py"], tmp_path)
    assert result.returncode == 2
    assert "--include no_such_package_xyz" in result.stderr


# --- under the emulator: the bundled example -----------------------------------------------------------------------

LOSS = re.compile(r"step (\d+) \| loss ([0-9.]+)")


@pytest.fixture(scope="module")
def example_copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The example unchanged, and a copy with the permanent port (`apply --no-git`)."""
    needs_compiler()
    pytest.importorskip("torch")
    pytest.importorskip("yaml")
    base = tmp_path_factory.mktemp("example")
    unchanged, ported = base / "unchanged", base / "ported"
    shutil.copytree(EXAMPLE, unchanged)
    shutil.copytree(EXAMPLE, ported)
    assert _cli(["apply", "--no-git", "-q", "."], ported).returncode == 0
    return unchanged, ported


def _losses(output: str) -> list[tuple[str, str]]:
    return LOSS.findall(output)


def _emulate(args: list[str], cwd: Path, seeded: Path | None = None) -> subprocess.CompletedProcess:
    env = emulator_environment()
    if seeded is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(seeded), env.get("PYTHONPATH")]))
    return subprocess.run([*CLI, "emulate", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    """A sitecustomize that seeds torch (the example does not seed its model): both runs start from the same
    weights. Under `run` it is the sitecustomize the bootstrap's shadows, so it also shows that one still runs."""
    folder = tmp_path / "seeded"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text("import torch\ntorch.manual_seed(0)\n")
    return folder


def test_the_unchanged_example_trains_on_the_npu_as_its_permanent_port_does(example_copies, seeded: Path) -> None:
    unchanged, ported = example_copies
    before = _digest(unchanged)
    command = ["python", "train.py", "--config", "configs/tiny.yaml"]
    on_the_fly = _emulate(["--", "ascend-port", "run", "--", *command], unchanged, seeded)
    permanent = _emulate(["--", *command], ported, seeded)
    assert on_the_fly.returncode == 0, on_the_fly.stderr[-3000:]
    assert permanent.returncode == 0, permanent.stderr[-3000:]
    losses = _losses(on_the_fly.stdout + on_the_fly.stderr)
    assert len(losses) == 3
    assert losses == _losses(permanent.stdout + permanent.stderr)
    assert "2 modules ported on the fly" in on_the_fly.stderr
    assert "torch_npu.npu_fusion_attention" in on_the_fly.stderr  # (the fused attention of the port ran)
    shutil.rmtree(unchanged / "checkpoints")  # (what the program writes: its checkpoint)
    assert _digest(unchanged) == before


def test_the_unchanged_example_trains_with_torchrun_two_processes(example_copies) -> None:
    unchanged, _ = example_copies
    before = _digest(unchanged)
    with socket.socket() as probe:  # (a free port for the rendezvous: torchrun's port 0 would reach its workers)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    torchrun = ["torchrun", "--nproc-per-node", "2", "--master-port", str(port)]
    result = _emulate(
        ["--devices", "2", "--", "ascend-port", "run", "--", *torchrun, "train.py", "--config", "configs/tiny.yaml"],
        unchanged,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 processes reported" in result.stderr
    assert "torch.npu.set_device: 2" in result.stderr  # each rank on its own npu
    shutil.rmtree(unchanged / "checkpoints", ignore_errors=True)
    assert _digest(unchanged) == before


def test_activate_ports_the_modules_a_notebook_imports_after_it(tmp_path: Path) -> None:
    (tmp_path / "envmod.py").write_text(ENV_SCRIPT.replace("sys.exit(int(sys.argv[1]))\n", ""))
    (tmp_path / "early.py").write_text("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n")
    code = (
        "import os, warnings\n"
        "warnings.simplefilter('always')\n"
        "import early\n"
        "import ascend_port\n"
        "ascend_port.activate()\n"
        "import envmod\n"
        "print(envmod.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("VISIBLE_DEVICES")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    # envmod ran ported (the variable's NPU name); early.py, imported before, ran as it is and is named
    assert result.stdout.splitlines() == [
        "['ASCEND_RT_VISIBLE_DEVICES', 'CUDA_VISIBLE_DEVICES']",
        str(tmp_path / "envmod.py"),
    ]
    assert "imported before ascend_port.activate(), so not ported: early" in result.stderr


def test_a_ported_package_reads_its_data_files_beside_it(tmp_path: Path) -> None:
    init_old = "import importlib.resources\nDEVICE = 'cuda'\n"
    init_new = "import importlib.resources\nDEVICE = 'npu'\n"
    main = "import pkg, importlib.resources\nprint(pkg.DEVICE, importlib.resources.files('pkg').joinpath('data.txt').read_text())\n"
    project, env = _project(tmp_path, {"main.py": (main, None), "pkg/__init__.py": (init_old, init_new)})
    (project / "pkg" / "data.txt").write_text("weights")
    result = _python([str(RUNNER), "main.py"], project, env)
    assert result.stdout == "npu weights\n", result.stderr


def test_the_summary_names_a_few_files_per_line_and_the_report_all(tmp_path: Path) -> None:
    from ascend_port.onthefly.launch import Launch, report, summary
    from ascend_port.onthefly.prepare import Prepared

    result = RunResult([], target="2.5.1.post1")
    module = FileResult("train.py", new_bytes=b"")
    configs = [FileResult(f"configs/c{i}.yaml", new_bytes=b"") for i in range(7)]
    prepared = Prepared(tmp_path / "m.json", result, {str(tmp_path / "train.py"): module}, configs)
    ran = Launch(0, {str(tmp_path / "train.py")}, ["pytest runs with --assert=plain"])
    lines = summary(prepared, ran, "ascend-port apply .")
    assert lines[0] == "ascend-port run: exit code 0; torch_npu 2.5.1.post1: 1 module ported on the fly, 0 TODOs"
    assert (
        "(configs/c0.yaml, configs/c1.yaml, configs/c2.yaml, configs/c3.yaml, configs/c4.yaml and 2 more)" in lines[2]
    )
    assert lines[-2:] == ["  note: pytest runs with --assert=plain", "to make the port permanent: ascend-port apply ."]
    assert len(report(prepared, ran, ["python", "train.py"], "ascend-port apply .")["not_python"]) == 7


def test_an_installed_package_is_ported_only_when_included(tmp_path: Path) -> None:
    """The standard library and installed packages are left alone unless named in --include; torch is never
    imported by run's own machinery (nothing of torch.cuda is patched)."""
    library = tmp_path / "site"
    (library / "extpkg").mkdir(parents=True)
    (library / "extpkg" / "__init__.py").write_text("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text(
        "import os, sys\nimport extpkg\n"
        "print(sorted(k for k in os.environ if k.endswith('VISIBLE_DEVICES')), 'torch' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("VISIBLE_DEVICES")}
    env["PYTHONPATH"] = str(library)
    plain = _cli(["run", "-q", "--", sys.executable, "main.py"], project, env)
    assert plain.stdout == "['CUDA_VISIBLE_DEVICES'] False\n", plain.stderr
    included = _cli(["run", "--include", "extpkg", "--", sys.executable, "main.py"], project, env)
    assert included.stdout == "['ASCEND_RT_VISIBLE_DEVICES'] False\n", included.stderr
    assert "site/extpkg/__init__.py: 1 rewrite" in included.stderr
    assert (library / "extpkg" / "__init__.py").read_text().count("CUDA_VISIBLE_DEVICES") == 1  # (unchanged)


def test_a_form_feed_ends_no_line_for_the_line_map() -> None:
    """Python (and git) end lines at newlines only: a form feed (a page break in old sources) is inside a line."""
    old = "import torch\n\x0c\nx = torch.cuda.is_available()\n"
    new = "import torch\nimport torch_npu\n\x0c\nx = torch.npu.is_available()\n"
    assert line_map(old, new) == ([1, 2, 2, 3], [2, 4])
