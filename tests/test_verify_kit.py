"""The kit for a real Ascend host (`ascend-port verify --kit DIR`, issue 26 part 3): what write_kit puts in the folder,
the runner's environment check on this machine (no Ascend: each check fails or warns with its fix, and the run goes
on), the comparison with the CPU reference, and the kit end to end against the emulator (`run_kit.py --emulate`) and
with `--accelerator cuda` on this CPU-only machine.

Until verify's probe (ascend_port/verify/probe/) exists, the kit is written with PROBE below: a minimal probe that
keeps the contract (ASCEND_PORT_PROBE_OUT / _LOSSES / _SEED; "losses", "step_times_s", "max_memory_bytes")."""

from __future__ import annotations

import ast
import importlib.util
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascend_port.verify import kit
from ascend_port.verify.kit import KitError, write_kit

pytest.importorskip("torch")

from emulation import environment, needs_compiler

RUNNER = kit.KIT_FILES / "run_kit.py"

PROBE = """
import atexit, json, os, time

if os.environ.get("ASCEND_PORT_PROBE_OUT"):
    import torch

    if os.environ.get("ASCEND_PORT_PROBE_SEED"):
        torch.manual_seed(int(os.environ["ASCEND_PORT_PROBE_SEED"]))
    _limit = int(os.environ.get("ASCEND_PORT_PROBE_LOSSES", "20"))
    _state = {"losses": [], "step_times_s": [], "last": None, "start": time.monotonic()}
    _backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        if self.numel() == 1:
            now = time.monotonic()
            if _state["last"] is not None:
                _state["step_times_s"].append(now - _state["last"])
            _state["last"] = now
            if len(_state["losses"]) < _limit:
                _state["losses"].append(float(self.detach().float().cpu()))
        return _backward(self, *args, **kwargs)

    torch.Tensor.backward = backward

    @atexit.register
    def _write():
        memory = None
        npu = getattr(torch, "npu", None)
        if npu is not None and hasattr(npu, "max_memory_allocated"):
            memory = npu.max_memory_allocated()
        elif torch.cuda.is_available():
            memory = torch.cuda.max_memory_allocated()
        out = os.path.join(os.environ["ASCEND_PORT_PROBE_OUT"], f"probe-{os.getpid()}.json")
        with open(out, "w") as f:
            json.dump({"pid": os.getpid(), "losses": _state["losses"], "step_times_s": _state["step_times_s"],
                       "max_memory_bytes": memory, "wall_s": time.monotonic() - _state["start"]}, f)
"""

# A tiny trainer as a CUDA project writes it, and its port (what `ascend-port apply` makes of the device line).
TRAIN = """
import sys
import time
import torch
{imports}
device = {device}
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 8, generator=torch.Generator().manual_seed(1)).to(device)
y = x.sum(1, keepdim=True)
for step in range(int(sys.argv[sys.argv.index("--steps") + 1])):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("device", x.device)
"""
ORIGINAL = TRAIN.format(imports="", device='"cuda" if torch.cuda.is_available() else "cpu"')
PORTED = TRAIN.format(imports="import torch_npu", device='"npu" if torch.npu.is_available() else "cpu"')
COMMANDS = [{"name": "train", "argv": ["python", "train.py", "--steps", "5"]}]


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("run_kit", RUNNER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "probe-src"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(PROBE, "utf-8")
    return folder


def project(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "train.py").write_text(source, "utf-8")
    return folder


def cpu_reference(tmp_path: Path, original: Path) -> dict:
    """What verify --compare records: the original's losses on CPU under the probe, with its seed."""
    out = tmp_path / "reference-probe"
    out.mkdir()
    env = {**environment(), "PYTHONPATH": f"{probe_folder(tmp_path)}", "ASCEND_PORT_PROBE_OUT": str(out)}
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["ASCEND_PORT_PROBE_SEED"] = "0"
    subprocess.run([sys.executable, *COMMANDS[0]["argv"][1:]], cwd=original, env=env, check=True, timeout=300)
    (losses,) = [json.loads(p.read_text())["losses"] for p in out.glob("probe-*.json")]
    assert len(losses) == 5
    return {"seed": 0, "rtol": 1e-4, "atol": 1e-5, "runs": [{**COMMANDS[0], "losses": losses}]}


def run_kit(folder: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(folder / "run_kit.py"), *args],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=timeout,
    )


def report_of(folder: Path) -> tuple[str, dict]:
    (markdown,) = sorted((folder / "reports").glob("kit-report-*.md"))
    return markdown.read_text("utf-8"), json.loads(markdown.with_suffix(".json").read_text("utf-8"))


def statuses(report: dict) -> dict[str, tuple[str, str]]:
    return {c["name"]: (c["status"], c["fix"]) for c in report["environment"]}


# ---- write_kit ----------------------------------------------------------------------------------------------------


def test_write_kit_writes_the_runner_commands_reference_probe_and_release_table(tmp_path):
    reference = {"seed": 3, "runs": [{**COMMANDS[0], "losses": [1.5, 1.25]}]}
    folder = write_kit(tmp_path / "kit", tmp_path, COMMANDS, reference, "2.5.1", probe=probe_folder(tmp_path))
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "commands.json",
        "probe",
        "reference.json",
        "releases.json",
        "run_kit.py",
    ]
    assert (folder / "probe" / "sitecustomize.py").read_text("utf-8") == PROBE
    commands = json.loads((folder / "commands.json").read_text("utf-8"))
    assert commands["commands"] == COMMANDS and commands["torch_npu"] == "2.5.1"
    assert commands["emulate_torch_npu"] == "2.5.1.post1"  # the release the emulator covers for torch 2.5.1
    assert commands["tolerances"]["bf16"]["rtol"] > commands["tolerances"]["fp32"]["rtol"]
    # the reference keeps its seed and losses and gets the fp32 tolerances it lacked
    written = json.loads((folder / "reference.json").read_text("utf-8"))
    assert written["seed"] == 3 and written["runs"][0]["losses"] == [1.5, 1.25]
    assert (written["rtol"], written["atol"]) == kit.TOLERANCES["fp32"]
    releases = {r["version"]: r for r in json.loads((folder / "releases.json").read_text("utf-8"))}
    assert releases["2.5.1"]["torch"] == "==2.5.1+cpu" and releases["2.5.1"]["torch_aarch64"] == "==2.5.1"
    assert releases["2.14.0"]["torch_version"] == "2.14.0" and "cp314" in releases["2.14.0"]["python"]


def test_the_runner_is_standard_library_only_and_parses_as_python_3_8():
    tree = ast.parse(RUNNER.read_text("utf-8"), feature_version=(3, 8))
    top = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    top |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top - set(sys.stdlib_module_names)


def test_write_kit_refuses_a_folder_that_is_not_a_kit_and_rewrites_an_earlier_kit(tmp_path):
    probe = probe_folder(tmp_path)
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("mine")
    with pytest.raises(KitError, match="not empty and not a kit"):
        write_kit(mine, tmp_path, COMMANDS, None, "2.5.1", probe=probe)
    assert (mine / "todo.txt").read_text() == "mine" and len(list(mine.iterdir())) == 1
    folder = write_kit(tmp_path / "kit", tmp_path, COMMANDS, {"runs": []}, "2.5.1", probe=probe)
    (folder / "reports").mkdir()
    (folder / "reports" / "kit-report-1.md").write_text("an earlier run")
    write_kit(folder, tmp_path, COMMANDS, None, "2.14.0", probe=probe)
    assert not (folder / "reference.json").exists()  # the new kit has none: the old one must not linger
    assert (folder / "reports" / "kit-report-1.md").read_text() == "an earlier run"
    assert json.loads((folder / "commands.json").read_text())["torch_npu"] == "2.14.0"


@pytest.mark.parametrize(
    ("commands", "reference", "message"),
    [
        ([{"name": "a", "argv": []}], None, "argv must be a non-empty list"),
        ([{"argv": ["python"]}], None, "no name"),
        (COMMANDS + COMMANDS, None, "two commands have this name"),
        (COMMANDS, {"runs": [{"name": "other", "losses": []}]}, "not one of the kit's commands"),
    ],
)
def test_write_kit_rejects_bad_commands_and_references(tmp_path, commands, reference, message):
    with pytest.raises(KitError, match=message):
        write_kit(tmp_path / "kit", tmp_path, commands, reference, "2.5.1", probe=probe_folder(tmp_path))
    assert not (tmp_path / "kit").exists()


def test_write_kit_names_a_missing_probe(tmp_path):
    with pytest.raises(KitError, match=f"{tmp_path / 'nowhere'}: no probe"):
        write_kit(tmp_path / "kit", tmp_path, COMMANDS, None, "2.5.1", probe=tmp_path / "nowhere")


# ---- the runner's checks, one by one -----------------------------------------------------------------------------


def test_pairing_holds_torch_npu_to_the_torch_its_wheel_pins(runner):
    table = kit.release_table()
    ok = statuses({"environment": runner.check_pairing("2.5.1+cpu", "2.5.1", "2.5.1", table, "x86_64", "cp310")})
    assert ok["torch-npu"][0] == ok["torch / torch-npu pair"][0] == ok["Python"][0] == "ok"
    # aarch64 wheels pin torch without +cpu; the local label does not decide the pair
    arm = statuses({"environment": runner.check_pairing("2.5.1", "2.5.1", "2.5.1", table, "aarch64", "cp310")})
    assert arm["torch / torch-npu pair"][0] == "ok"
    bad = statuses({"environment": runner.check_pairing("2.6.0+cpu", "2.5.1", "2.5.1", table, "x86_64", "cp312")})
    assert (
        bad["torch / torch-npu pair"][0] == "fail"
        and "pip install torch==2.5.1+cpu --index-url" in bad["torch / torch-npu pair"][1]
    )
    assert bad["Python"][0] == "fail" and "cp39, cp310, cp311" in bad["Python"][1]
    # nothing installed: the fix names the release the port targets and its torch
    none = statuses({"environment": runner.check_pairing(None, None, "2.14.0", table, "x86_64", "cp311")})
    assert none["torch-npu"] == ("fail", "pip install torch-npu==2.14.0 (with torch==2.14.0)")
    assert none["torch"][0] == "fail" and none["Python"][0] == "ok"
    other = statuses({"environment": runner.check_pairing("2.14.0", "2.14.0", "2.5.1", table, "x86_64", "cp311")})
    assert other["torch-npu"][0] == "warn" and other["torch / torch-npu pair"][0] == "ok"
    newer = runner.check_pairing("2.20.0", "2.20.0", "2.5.1", table, "x86_64", "cp311")
    assert newer[0]["status"] == "warn" and "2.20.0 is not in the kit's release table" in newer[0]["detail"]
    assert [c["name"] for c in newer] == ["torch-npu"]  # its torch pin is unknown: 2.5.1's would be the wrong one
    assert runner.torch_matches("2.14.0+cpu", "==2.14.0.*") and not runner.torch_matches("2.14.1", "==2.14.0.*")
    assert runner.torch_matches("2.1.0", ">=2.1") is None


def test_driver_firmware_and_cann_are_read_from_their_version_files(runner, tmp_path):
    root = tmp_path / "Ascend"
    (root / "driver").mkdir(parents=True)
    (root / "driver" / "version.info").write_text("Version = 24.1.rc3\nascendhal_version=7.35.23\n")
    toolkit = root / "ascend-toolkit" / "latest" / "x86_64-linux"
    toolkit.mkdir(parents=True)
    (toolkit / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.0.RC3\n")
    checks = statuses({"environment": runner.check_driver_firmware(str(root))})
    assert checks["driver"][0] == "ok" and checks["firmware"][0] == "warn"
    assert runner.check_driver_firmware(str(root))[0]["detail"].endswith("version.info: 24.1.rc3")
    home = str(root / "ascend-toolkit" / "latest")
    sourced = {"ASCEND_HOME_PATH": home, "LD_LIBRARY_PATH": f"/usr/lib:{home}/lib64"}
    cann = runner.check_cann(str(root), sourced)
    assert [c["status"] for c in cann] == ["ok", "ok"] and "CANN 8.0.RC3" in cann[0]["detail"]
    bare = statuses({"environment": runner.check_cann(str(root), {})})
    assert bare["CANN toolkit"][0] == "ok"
    assert bare["set_env.sh"] == ("fail", f"source {root}/ascend-toolkit/set_env.sh")
    missing = statuses({"environment": runner.check_cann(str(tmp_path / "none"), {})})
    assert missing["CANN toolkit"][0] == "fail" and "install the CANN toolkit" in missing["CANN toolkit"][1]


def test_failures_are_given_their_fix(runner):
    assert "set_env.sh" in runner.hint("ImportError: libhccl.so: cannot open shared object file: No such file")
    assert "CPU build" in runner.hint("RuntimeError: Two accelerators cannot be used at the same time in PyTorch")
    assert "torch-npu" in runner.hint("ModuleNotFoundError: No module named 'torch_npu'")
    assert runner.hint("ValueError: something else") == ""


def test_comparison_holds_within_tolerance_and_says_why_it_fails(runner):
    held = runner.compare([2.0, 1.0], [2.001, 1.0005, 0.5], rtol=1e-3, atol=0.0)
    assert held["passed"] and held["got"] == [2.001, 1.0005] and held["max_abs"] == pytest.approx(1e-3)
    assert held["max_rel"] == pytest.approx(5e-4)
    off = runner.compare([2.0, 1.0], [2.0, 1.01], rtol=1e-3, atol=1e-3)
    assert not off["passed"] and "1 of 2 losses outside" in off["reason"] and "step 1" in off["reason"]
    assert runner.compare([2.0, 1.0], [2.0], 1e-3, 1e-3)["reason"] == "1 of 2 losses recorded"
    assert "no losses recorded" in runner.compare([2.0], [], 1e-3, 1e-3)["reason"]
    assert not runner.compare([2.0], [float("nan")], 1e-3, 1e-3)["passed"]


def test_losses_and_step_times_come_from_the_training_process(runner):
    probes = [
        {"pid": 1, "losses": [], "max_memory_bytes": None, "wall_s": 9.0},  # torchrun's launcher
        {"pid": 2, "rank": 1, "losses": [1.0, 2.0, 3.0], "step_times_s": [5.0], "max_memory_bytes": 10},
        {"pid": 3, "rank": 0, "losses": [1.5, 2.5], "step_times_s": [1.0, 0.2, 0.3, 0.4], "max_memory_bytes": 20},
    ]
    assert runner.recorded_losses(probes) == [1.5, 2.5]
    timings = runner.timings(probes)
    assert (timings["steps"], timings["first_step_s"], timings["median_step_s"]) == (4, 1.0, 0.3)
    assert timings["peak_memory_bytes"] == 20  # the largest of every process
    unranked = [{"losses": [1.0]}, {"losses": [1.0, 2.0], "step_times_s": [0.1]}]
    assert runner.recorded_losses(unranked) == [1.0, 2.0] and runner.timings(unranked)["median_step_s"] == 0.1
    assert runner.recorded_losses([{"losses": []}]) == [] and runner.timings([])["steps"] == 0


# ---- the runner end to end ----------------------------------------------------------------------------------------


@pytest.mark.slow  # several interpreters import torch: 7-12 s on 2 shared cores
def test_environment_check_on_a_host_without_ascend_fails_each_check_with_its_fix_and_goes_on(tmp_path):
    original = project(tmp_path, "original", ORIGINAL)
    folder = write_kit(tmp_path / "kit", original, COMMANDS, None, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--project", str(original), "--check-only")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    markdown, report = report_of(folder)
    checks = statuses(report)
    assert checks["npu-smi"][0] == "fail" and "install the Ascend driver" in checks["npu-smi"][1]
    assert checks["driver"][0] == "fail" and checks["CANN toolkit"][0] == "fail"
    assert checks["set_env.sh"][0] == "fail" and "set_env.sh" in checks["set_env.sh"][1]
    assert checks["torch-npu"] == ("fail", "pip install torch-npu==2.5.1 (with torch==2.5.1+cpu)")
    assert (
        checks["NPU devices"][0] == "fail" and "torch-npu==2.5.1" in checks["NPU devices"][1]
    )  # import torch_npu failed
    assert checks["CUDA torch beside torch_npu"][0] == "ok"  # no torch_npu here: CPU torch is no conflict
    assert "| npu-smi | fail |" in markdown and "**Result: FAIL**" in markdown


@pytest.mark.slow
def test_kit_end_to_end_under_the_emulator_passes_and_a_wrong_reference_fails(tmp_path):
    needs_compiler()
    original = project(tmp_path, "original", ORIGINAL)
    ported = project(tmp_path, "ported", PORTED)
    reference = cpu_reference(tmp_path, original)
    folder = write_kit(ported / "kit", ported, COMMANDS, reference, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--emulate")  # --project defaults to the kit's parent
    assert done.returncode == 0, done.stdout + done.stderr
    markdown, report = report_of(folder)
    assert "**EMULATED: not a real NPU run**" in markdown and report["mode"] == "emulate"
    assert "environment check(s) failed" in markdown and "not held against an emulated run" in markdown
    assert report["comparisons"]["train"]["passed"] and report["comparisons"]["train"]["got"] == pytest.approx(
        reference["runs"][0]["losses"], rel=1e-4
    )
    assert "### train: PASS" in markdown
    run = report["runs"][0]
    assert run["exit_code"] == 0 and run["timings"]["steps"] == 4 and run["timings"]["median_step_s"] > 0
    assert "device npu:0" in (Path(run["logs"]) / "stdout.log").read_text()  # it ran on the emulated npu
    assert "| train | 4 |" in markdown and "KiB |  |" in markdown  # the emulated npu's memory, no warning
    assert not run["no_device"] and 0 < run["timings"]["peak_memory_bytes"] < 2**20

    wrong = {
        **reference,
        "runs": [{**reference["runs"][0], "losses": [x + 0.5 for x in reference["runs"][0]["losses"]]}],
    }
    folder = write_kit(tmp_path / "kit2", ported, COMMANDS, wrong, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--emulate", "--project", str(ported))
    assert done.returncode == 1, done.stdout + done.stderr
    markdown, report = report_of(folder)
    assert report["runs"][0]["exit_code"] == 0 and not report["comparisons"]["train"]["passed"]
    assert "### train: FAIL: 5 of 5 losses outside" in markdown and "**Result: FAIL**" in markdown


@pytest.mark.slow  # several interpreters import torch: 7-12 s on 2 shared cores
def test_accelerator_cuda_on_a_cpu_only_host_reports_no_cuda(tmp_path):
    original = project(tmp_path, "original", ORIGINAL)
    reference = cpu_reference(tmp_path, original)
    folder = write_kit(tmp_path / "kit", original, COMMANDS, reference, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--accelerator", "cuda", "--project", str(original))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    markdown, report = report_of(folder)
    checks = statuses(report)
    assert checks["nvidia-smi"][0] == "fail" and checks["CUDA devices"][0] == "fail"
    assert "no CUDA" in next(c["detail"] for c in report["environment"] if c["name"] == "CUDA devices")
    assert "CUDA: the NPU replaced by CUDA" in markdown and "npu-smi" not in markdown
    # the command still ran (on CPU here) and its comparison is reported: the environment alone failed the run
    assert report["runs"][0]["exit_code"] == 0 and report["comparisons"]["train"]["passed"]
    assert report["runs"][0]["no_device"] and "**trained without device memory: it ran on the CPU**" in markdown


@pytest.mark.slow  # several interpreters import torch: 7-12 s on 2 shared cores
def test_a_failing_command_is_reported_with_its_stderr_and_the_others_still_run(tmp_path):
    original = project(
        tmp_path,
        "original",
        ORIGINAL + "\nraise SystemExit('the loader broke: libhccl.so: cannot open shared object file')\n",
    )
    commands = [
        {"name": "broken", "argv": ["python", "train.py", "--steps", "1"]},
        {"name": "missing", "argv": ["python", "nothere.py"]},
    ]
    folder = write_kit(tmp_path / "kit", original, commands, None, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--accelerator", "cuda", "--project", str(original), "--timeout", "120")
    assert done.returncode == 1
    markdown, report = report_of(folder)
    assert [r["exit_code"] for r in report["runs"]] == [1, 2]
    assert "the loader broke" in markdown and "source /usr/local/Ascend/ascend-toolkit/set_env.sh" in markdown
    assert "nothere.py" in "\n".join(report["runs"][1]["stderr_tail"])
    done = run_kit(folder, "--only", "nope")
    assert done.returncode == 2 and "the kit's commands are broken, missing" in done.stderr


def test_readme_of_the_kit_documents_the_defaults_it_ships():
    readme = (kit.KIT_FILES / "README.md").read_text("utf-8")
    for dtype, (rtol, atol) in kit.TOLERANCES.items():
        assert f"{dtype} rtol {short(rtol)}, atol {short(atol)}" in readme
    assert "python kit/run_kit.py --project ." in readme


def short(value: float) -> str:
    return f"{value:.0e}".replace("e-0", "e-")


@pytest.mark.slow  # several interpreters import torch: 7-12 s on 2 shared cores
def test_commands_get_the_probe_its_settings_and_the_kit_python_and_a_timeout_ends_them(tmp_path):
    show = (
        "import json, os, sys; print(json.dumps({'python': sys.executable, 'path': os.environ['PYTHONPATH'],"
        " **{k: v for k, v in os.environ.items() if k.startswith('ASCEND_PORT_PROBE')}}))"
    )
    commands = [
        {"name": "env", "argv": ["python3", "-c", show]},
        {"name": "sleep", "argv": ["python", "-c", "import time; time.sleep(120)"]},
    ]
    reference = {"seed": 7, "runs": [{**commands[0], "losses": [1.0] * 30}]}
    folder = write_kit(tmp_path / "kit", tmp_path, commands, reference, "2.5.1", probe=probe_folder(tmp_path))
    done = run_kit(folder, "--accelerator", "cuda", "--timeout", "3", timeout=120)
    assert done.returncode == 1
    markdown, report = report_of(folder)
    env_run, sleep_run = report["runs"]
    seen = json.loads((Path(env_run["logs"]) / "stdout.log").read_text())
    assert seen["python"] == sys.executable  # `python3` in a command is the interpreter that runs the kit
    assert seen["path"].split(":")[0] == str(folder / "probe")
    assert seen["ASCEND_PORT_PROBE_SEED"] == "7" and seen["ASCEND_PORT_PROBE_LOSSES"] == "30"
    assert Path(seen["ASCEND_PORT_PROBE_OUT"]).is_dir()
    assert sleep_run["timed_out"] and sleep_run["seconds"] < 60 and "| sleep | timed out |" in markdown
    # the env command called no backward(): its comparison fails and says why
    assert "no losses recorded" in report["comparisons"]["env"]["reason"]


def test_ctrl_c_stops_the_command_and_still_writes_the_report(tmp_path):
    commands = [{"name": "sleep", "argv": ["python", "-c", "import time; time.sleep(120)"]}]
    folder = write_kit(tmp_path / "kit", tmp_path, commands, None, "2.5.1", probe=probe_folder(tmp_path))
    process = subprocess.Popen(
        [sys.executable, str(folder / "run_kit.py"), "--accelerator", "cuda"],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    logs = folder / "reports"
    deadline = time.monotonic() + 60
    while not list(logs.glob("*/sleep/stdout.log")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    markdown, report = report_of(folder)
    assert "interrupted by Ctrl-C" in markdown and "| sleep | interrupted |" in markdown
    assert report["runs"][0]["interrupted"] and not report["passed"]


def test_a_kit_with_a_broken_file_is_a_usage_error_naming_it(tmp_path):
    folder = write_kit(tmp_path / "kit", tmp_path, COMMANDS, None, "2.5.1", probe=probe_folder(tmp_path))
    (folder / "commands.json").write_text("{")
    done = run_kit(folder, "--check-only")
    assert done.returncode == 2 and f"error: {folder / 'commands.json'} is not valid JSON" in done.stderr
