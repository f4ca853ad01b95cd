"""ascend-port verify: the ported project's commands run under the emulator, each classified (subprocesses of the
real CLI on small projects written here)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, check, environment, needs_compiler, run

PROBE = Path(__file__).resolve().parent.parent / "ascend_port" / "verify" / "probe"


@pytest.fixture(scope="module", autouse=True)
def built_device(tmp_path_factory):
    """The native device is compiled once (cached under ~/.cache/ascend-port): the first run pays."""
    needs_compiler()
    folder = tmp_path_factory.mktemp("build")
    (folder / "s.py").write_text("import torch_npu\n", "utf-8")
    check(run([*CLI, "emulate", "--", sys.executable, str(folder / "s.py")], cwd=folder, timeout=600))


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return root


def verify(root: Path, *options: str, timeout: int = 300, **env: str) -> subprocess.CompletedProcess:
    return run([*CLI, "verify", str(root), *options], cwd=root, timeout=timeout, env={**environment(), **env})


def by_name(report: dict) -> dict[str, dict]:
    return {r["name"]: r for r in report["results"]}


PORTED = {
    "pyproject.toml": """
        [project]
        name = "pkg"
        version = "0"
        [project.scripts]
        pkg-cli = "pkg.cli:main"
    """,
    "pkg/__init__.py": "",
    "pkg/dev.py": """
        import torch
        import torch_npu

        DEV = torch.cuda.current_device()
    """,
    "pkg/old.py": """
        import torch
        import torch_npu

        POOL = torch.npu.MemPool
    """,
    "pkg/todo.py": """
        import torch
        import torch_npu

        def scale(x):
            # TODO(ascend-port): NPU303 [low] double precision on the NPU: keep this part on the CPU
            return x.double().npu() / 0 if x.numel() > 9 else 1 / 0

        VALUE = scale(torch.ones(2))
    """,
    "pkg/dep.py": """
        import torch_npu
        import notinstalled_dependency
    """,
    "pkg/cli.py": """
        import argparse
        import torch_npu

        def main():
            argparse.ArgumentParser(prog="pkg-cli").parse_args()
            return 0
    """,
    "tests/test_npu.py": """
        import pytest
        import torch
        import torch_npu

        @pytest.mark.skipif(not torch.npu.is_available(), reason="needs an NPU")
        def test_on_npu():
            assert torch.ones(2, device="npu").sum().item() == 2
    """,
}


@pytest.mark.slow
def test_each_failure_is_classified_and_the_rest_starts(tmp_path):
    """Discovered commands: one import process for the ported modules (each failure with its cause and project
    frame), the console script's --help, the pytest suite whose npu test runs on the emulated device."""
    root = write(tmp_path / "proj", PORTED)
    result = verify(root, "--torch-npu", "2.2.0.post2", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    results = by_name(report)
    cause = {name: (r["failure"] or {}).get("cause") for name, r in results.items()}
    assert cause == {
        "import pkg.cli": None,
        "import pkg.dep": "dependency",
        "import pkg.dev": "cuda",
        "import pkg.old": "absent",
        "import pkg.todo": "todo",
        "pkg-cli --help": None,
        "pytest": None,
    }
    dev = results["import pkg.dev"]["failure"]
    assert dev["frame"]["line"] == 4 and dev["frame"]["file"].endswith("pkg/dev.py")
    assert "Torch not compiled with CUDA enabled" in dev["exception"]
    assert "torch_npu.npu.MemPool" in results["import pkg.old"]["failure"]["detail"]
    todo = results["import pkg.todo"]["failure"]
    assert todo["frame"]["line"] == 6 and "TODO at line 5" in todo["detail"]
    assert "notinstalled_dependency" in results["import pkg.dep"]["failure"]["detail"]
    # the skipif(not torch.npu.is_available()) test ran on the npu: not skipped, not on the CPU
    assert results["pytest"]["npu_calls"].get("torch.npu.is_available") and not results["pytest"]["stayed_on_cpu"]
    assert report["started"] == 3 and report["failed"] == 4
    # progress: one line per command on stderr
    assert "failed (exit 1): import pkg.dev" in result.stderr and "started: pytest" in result.stderr


TRAIN = {
    "pyproject.toml": """
        [tool.ascend-port.verify]
        commands = ["python train.py", "python stays.py", "python half.py", "python scaled.py"]
    """,
    "train.py": """
        import torch
        import torch_npu

        device = "npu"
        model = torch.nn.Linear(4, 1).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4).to(device), torch.randn(16, 1).to(device)
        # TODO(ascend-port): NPU303 [low] double precision on the NPU
        table = torch.zeros(3, dtype=torch.float64, device=device)
        for step in range(4):
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(step, loss.item())

        def unused():
            # TODO(ascend-port): NPU999 [low] never runs
            return torch.cuda.current_device()
    """,
    "stays.py": """
        import torch
        import torch_npu

        device = "cuda" if torch.cuda.is_available() else "cpu"
        print(torch.npu.is_available(), torch.ones(2, device=device).sum())  # (asks, and stays on the CPU)
    """,
    "half.py": """
        import torch
        import torch_npu

        dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32  # (chosen only for CUDA)
        model = torch.nn.Linear(4, 4).to("npu")
        with torch.autocast("npu", dtype=dtype, enabled=dtype != torch.float32):
            model(torch.randn(2, 4, device="npu")).sum().backward()
    """,
    "scaled.py": """
        import torch
        import torch_npu

        model = torch.nn.Linear(4, 1).to("npu")
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.npu.amp.GradScaler()
        loss = model(torch.ones(2, 4, device="npu")).square().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)  # (GradScaler's own float64 reciprocal of its scale is no dtype the program chose)
        print(loss.item())
    """,
}


@pytest.mark.slow
def test_probe_facts_of_configured_commands(tmp_path):
    """The configured commands run (not the discovered ones); the probe says which TODO line ran, the fp64 tensor
    made on the npu, the .item() of every step, the losses, the script that never reached the npu, and the one that
    computed in float32 where it names bfloat16."""
    root = write(tmp_path / "train", TRAIN)
    output = tmp_path / "report.json"
    result = verify(root, "--format", "json", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    results = by_name(json.loads(output.read_text("utf-8")))
    assert list(results) == ["python train.py", "python stays.py", "python half.py", "python scaled.py"]
    train = results["python train.py"]
    assert train["todo_lines_hit"] == {"train.py": [8]}
    assert train["dtypes_on_npu"] == {"float64 at train.py:9": 1}
    assert train["syncs_in_loops"] == {"item at train.py:15": 4}
    assert len(train["losses"]) == 4 and train["losses"][0] > train["losses"][-1]
    assert not train["stayed_on_cpu"] and results["python stays.py"]["stayed_on_cpu"]
    # a float32-only run is worth a look where the code it ran picks a half-precision dtype beside a CUDA check
    assert train["compute_dtypes"] == {"float32": 4} and not train["float32_only"]
    assert results["python half.py"]["compute_dtypes"] == {"float32": 1}
    assert results["python half.py"]["float32_only"] == "half.py:4"
    scaled = results["python scaled.py"]
    assert scaled["dtypes_on_npu"] == {} and len(scaled["losses"]) == 1 and scaled["losses"][0] < 100
    text = verify(root, "--format", "md", "-q")
    assert "| `python stays.py` | started |" in text.stdout and "1 stayed on CPU" in text.stdout
    assert text.stderr == ""


@pytest.mark.slow
def test_compare_runs_the_original_on_cpu_with_the_same_seed(tmp_path):
    """--compare: the original from git (the commit below the uncommitted port) on plain CPU, with its own arguments
    and the untracked data the port reads too, the port under the emulator; the losses side by side and the
    reference JSON of the kit's contract."""
    root = tmp_path / "proj"
    original = {
        "pyproject.toml": """
            [tool.ascend-port.verify]
            commands = [{run = "python train.py", original = "python train.py --device cpu"}, "python -m pytest -q"]
        """,
        ".gitignore": "data/\n",
        # a test suite judges itself: its losses are not compared
        "test_loss.py": """
            import torch

            def test_backward():
                torch.ones(2, requires_grad=True).sum().backward()
        """,
        "train.py": """
            import sys
            from pathlib import Path

            import torch

            device = sys.argv[2] if sys.argv[1:2] == ["--device"] else "cuda"
            lr = float(Path("data/lr.txt").read_text())
            model = torch.nn.Linear(8, 1).to(device)
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            for step in range(3):
                x = torch.randn(16, 8, device=device)
                loss = (model(x) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        """,
    }
    write(root, {**original, "data/lr.txt": "0.1"})
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "original"], check=True)
    ported = (root / "train.py").read_text("utf-8").replace("import torch\n", "import torch\nimport torch_npu\n")
    (root / "train.py").write_text(ported.replace('else "cuda"', 'else "npu"'), "utf-8")
    result = verify(root, "--compare", "--seed", "7", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (entry,) = report["compare"]
    assert len(entry["original"]) == 3 and entry["original"] == pytest.approx(entry["port"], rel=1e-4)
    assert entry["verdict"].startswith("match")
    assert not report["results"][0]["stayed_on_cpu"]
    reference = json.loads((root / ".ascend-port" / "verify-reference.json").read_text("utf-8"))
    assert reference["seed"] == 7 and {"rtol", "atol"} <= set(reference)
    assert reference["runs"] == [
        {
            "name": "python train.py",
            "argv": ["python", "train.py"],
            "original_argv": ["python", "train.py", "--device", "cpu"],
            "losses": entry["original"],
            "dtype": "fp32",  # (the port's matmuls ran in float32: the tightest tolerances)
            "rtol": 1e-3,
            "atol": 1e-5,
        }
    ]
    # the same seed gives the same losses (the probe seeds torch at start-up)
    again = json.loads(verify(root, "--compare", "--seed", "7", "--format", "json").stdout)
    assert again["compare"][0]["original"] == entry["original"]


@pytest.mark.slow
def test_timeout_kills_the_command_and_fails_it(tmp_path):
    root = write(
        tmp_path / "slow",
        {
            "pyproject.toml": """
            [tool.ascend-port.verify]
            commands = ["python -c 'import time; print(\\"waiting\\", flush=True); time.sleep(120)'", "python -c 'print(1)'"]
        """,
        },
    )
    report = tmp_path / "report.json"
    result = verify(root, "--timeout", "3", "--format", "json", "--output", str(report), "-v", timeout=60)
    assert result.returncode == 1, result.stderr
    first, second = json.loads(report.read_text("utf-8"))["results"]
    assert first["timed_out"] and first["failure"]["cause"] == "timeout" and first["seconds"] < 20
    assert second["started"]
    # -v: the argv and the output of the failed command on stderr
    assert "  | waiting\n" in result.stderr and "  argv: python -c 'import time;" in result.stderr
    text = verify(root, "--timeout", "3", "-q", timeout=60).stdout
    assert "timed out: python -c 'import time;" in text and "output (last lines):\n    waiting\n" in text


def test_ctrl_c_reports_what_finished_and_exits_130(tmp_path):
    root = write(
        tmp_path / "p",
        {
            "pyproject.toml": """
            [tool.ascend-port.verify]
            commands = ["python -c 'print(1)'", "python -c 'print(2)'"]
        """,
        },
    )
    result = verify(root, "--format", "json", ASCEND_PORT_TEST_SIGINT="verify:1")
    assert result.returncode == 130, result.stderr
    report = json.loads(result.stdout)
    assert report["interrupted"] and [r["name"] for r in report["results"]] == ["python -c 'print(1)'"]


CONFIGURED = '[tool.ascend-port.verify]\ncommands = ["python -c pass"]\n'


@pytest.mark.parametrize(
    ("args", "files", "message"),
    [
        (["--format", "xml"], {}, "--format 'xml'"),
        (["--original", "."], {}, "--original and --base go with --compare"),
        ([], {"pyproject.toml": "[tool.ascend-port.verify]\ncommands = 3\n"}, "commands: a list of command lines"),
        ([], {"README.md": "nothing"}, "nothing to run"),
        (["--torch-npu", "0.1"], {"a.py": "import torch_npu\n"}, "--torch-npu 0.1"),
        (["--compare"], {"pyproject.toml": CONFIGURED}, "not a git repository"),
        ([], {"pyproject.toml": CONFIGURED.replace("python -c pass", "bash run.sh")}, "'bash' is not a supported"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, files, message):
    """Before any command runs: a usage error does not come after minutes of runs."""
    root = write(tmp_path / "p", files or {"x.txt": ""})
    result = verify(root, *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "started" not in result.stderr


def test_a_reference_that_cannot_be_written_keeps_the_report(tmp_path):
    root = write(tmp_path / "p", {"pyproject.toml": CONFIGURED, "original/x.txt": ""})
    blocked = tmp_path / "file"
    blocked.write_text("", "utf-8")
    args = ["--compare", "--original", str(root / "original"), "--reference", str(blocked / "ref.json")]
    result = verify(root, *args, "--format", "json")
    assert result.returncode == 2 and "cannot write the reference" in result.stderr
    assert json.loads(result.stdout)["results"][0]["started"]


def test_kit_is_written_through_the_kit_helper(tmp_path, monkeypatch):
    """--kit DIR calls verify.kit.write_kit with the commands (argv relative to the root, `python` not a path)."""
    import types

    from typer.testing import CliRunner

    from ascend_port.cli import app

    calls = []
    fake = types.ModuleType("ascend_port.verify.kit")
    fake.write_kit = lambda *args: calls.append(args) or args[0]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ascend_port.verify.kit", fake)
    monkeypatch.setenv("ASCEND_PORT_CACHE_DIR", environment()["ASCEND_PORT_CACHE_DIR"])
    root = write(tmp_path / "p", {"pyproject.toml": '[tool.ascend-port.verify]\ncommands = ["python -c pass"]\n'})
    result = CliRunner().invoke(app, ["verify", str(root), "--kit", str(tmp_path / "kit")])
    assert result.exit_code == 0, result.output
    assert f"kit for the Ascend host written: {tmp_path / 'kit'}" in result.output
    ((folder, project, commands, reference, target),) = calls
    assert folder == tmp_path / "kit" and project == root.resolve() and reference is None
    assert commands == [{"name": "python -c pass", "argv": ["python", "-c", "pass"]}] and target
    monkeypatch.setitem(sys.modules, "ascend_port.verify.kit", None)  # an ascend-port without the kit writer
    result = CliRunner().invoke(app, ["verify", str(root), "--kit", str(tmp_path / "kit"), "-q"])
    assert result.exit_code == 2 and "no kit writer" in result.output


def test_probe_is_inert_without_its_variable_and_chain_loads_another_sitecustomize(tmp_path):
    other = write(tmp_path / "other", {"sitecustomize.py": "import builtins\nbuiltins.CHAINED = True\n"})
    env = {k: v for k, v in environment().items() if not k.startswith("ASCEND_PORT_PROBE")}
    env["PYTHONPATH"] = f"{PROBE}:{other}"
    code = "import builtins, sys; print(getattr(builtins, 'CHAINED', False), '_ascend_port_probe' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]
    env["ASCEND_PORT_PROBE_OUT"] = str(tmp_path / "out")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]
    (written,) = (tmp_path / "out").glob("probe-*.json")
    data = json.loads(written.read_text("utf-8"))
    assert data["argv"] == ["-c"] and data["losses"] == [] and not data["torch_imported"]


def test_ctrl_c_while_a_command_runs_kills_its_process_group(tmp_path):
    """SIGINT to verify while a command runs: the command (in its own session) and its children are killed, the
    report says interrupted, exit 130."""
    import signal
    import time

    root = write(
        tmp_path / "p",
        {
            "pyproject.toml": """
            [tool.ascend-port.verify]
            commands = ["python sleeper.py", "python -c 'print(2)'"]
        """,
            "sleeper.py": """
            import os, subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            open("pids", "w").write(f"{os.getpid()} {child.pid}")
            time.sleep(120)
        """,
        },
    )
    process = subprocess.Popen(
        [*CLI, "verify", str(root), "--format", "json"],
        cwd=root,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (root / "pids").is_file() or len((root / "pids").read_text().split()) < 2:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    report = json.loads(stdout)
    assert report["interrupted"] and report["results"] == []
    for pid in map(int, (root / "pids").read_text().split()):
        assert not running(pid)


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan killed is reaped by init, which may take its time, or never in a
    container whose first process does not reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_the_emulated_release_is_the_one_the_port_targeted(tmp_path):
    """No --torch-npu: the project's [tool.ascend-port] torch-npu (what the port emitted for) is emulated."""
    root = write(
        tmp_path / "p",
        {
            "pyproject.toml": """
            [tool.ascend-port]
            torch-npu = "2.2.0.post2"
            [tool.ascend-port.verify]
            commands = ["python -c pass"]
        """,
        },
    )
    result = verify(root, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["torch_npu"] == "2.2.0.post2"
    assert "emulating torch_npu 2.2.0.post2 (" in result.stderr and "pyproject.toml)" in result.stderr
    flagged = verify(root, "--format", "json", "--torch-npu", "2.5.1.post1")
    assert json.loads(flagged.stdout)["torch_npu"] == "2.5.1.post1"


def test_probe_records_the_loss_a_grad_scaler_scaled_unscaled(tmp_path):
    """`scaler.scale(loss).backward()`: the recorded loss is the program's, not 65536 times it (timm's NativeScaler
    on the npu against the original on CPU, where CUDA's GradScaler is disabled, differed by the scale)."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "scaler = torch.amp.GradScaler('cpu', init_scale=1024.0)\n"
        "loss = (w * 3).sum()\n"
        "scaled = scaler.scale(loss)\n"
        "assert float(scaled) == 6144.0\n"
        "scaled.backward()\n",
        "utf-8",
    )
    env = {k: v for k, v in environment().items() if not k.startswith("ASCEND_PORT_PROBE")}
    env.update(PYTHONPATH=str(PROBE), ASCEND_PORT_PROBE_OUT=str(tmp_path / "out"))
    subprocess.run([sys.executable, str(script)], env=env, check=True, cwd=tmp_path)
    (written,) = (tmp_path / "out").glob("probe-*.json")
    assert json.loads(written.read_text("utf-8"))["losses"] == [6.0]
