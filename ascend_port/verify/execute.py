"""Run one command of the project under the emulator (or, for --compare's original, on plain CPU) with the probe:
its own process group (a timeout or Ctrl-C ends the whole tree), its output kept for the classifier."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.emulate import runner

PROBE_DIR = Path(__file__).resolve().parent / "probe"
IMPORTS_SCRIPT = PROBE_DIR / "_ascend_port_imports.py"
OUTPUT_KEPT = 200_000  # characters of a command's output kept (its end: where the traceback is)


@dataclass
class Outcome:
    exit_code: int | None  # None: timed out, or could not start (``error``)
    seconds: float
    output: str
    timed_out: bool = False
    error: str | None = None
    emulator: dict = field(default_factory=dict)  # the runner's merged report
    probes: list[dict] = field(default_factory=list)
    imports: list[dict] = field(default_factory=list)  # kind "import": one entry per module


@dataclass
class Setup:
    root: Path
    devices: int = 1
    api: Path | None = None  # the target release's names (runner.target_api); None: plain CPU, no emulator
    todos_file: Path | None = None
    seed: int | None = None
    losses: int = 20


def environment(setup: Setup, probe_out: Path, report_dir: Path) -> dict[str, str]:
    if setup.api is not None:
        env = runner.build_environment(setup.devices, str(report_dir), setup.api)
    else:
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = ""  # the original on plain CPU
    paths = [str(PROBE_DIR)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["ASCEND_PORT_PROBE_OUT"] = str(probe_out)
    env["ASCEND_PORT_PROBE_LOSSES"] = str(setup.losses)
    if setup.todos_file is not None:
        env["ASCEND_PORT_PROBE_TODOS"] = str(setup.todos_file)
    if setup.seed is not None:
        env["ASCEND_PORT_PROBE_SEED"] = str(setup.seed)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def run(argv: list[str], setup: Setup, timeout: float | None, imports: list[tuple[str, str]] | None = None) -> Outcome:
    """Run ``argv`` in the project root. KeyboardInterrupt propagates after the child's group is killed."""
    with tempfile.TemporaryDirectory(prefix="ascend-port-verify-") as scratch:
        folder = Path(scratch)
        probe_out, report_dir = folder / "probe", folder / "emulator"
        probe_out.mkdir()
        report_dir.mkdir()
        imports_out = folder / "imports.json"
        if imports is not None:
            argv = [sys.executable, str(IMPORTS_SCRIPT), str(imports_out), *(f"{e}:{m}" for e, m in imports)]
        started = time.monotonic()
        try:
            if setup.api is not None:
                argv, _ = runner.resolve_command(argv)
        except runner.UsageError as error:
            return Outcome(None, 0.0, "", error=str(error))
        try:
            process = subprocess.Popen(
                argv,
                cwd=setup.root,
                env=environment(setup, probe_out, report_dir),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            return Outcome(None, 0.0, "", error=f"cannot run {argv[0]}: {error.strerror or error}")
        timed_out = False
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            output, _ = process.communicate()
        except KeyboardInterrupt:
            _kill_group(process)
            raise
        code = process.returncode
        outcome = Outcome(
            None if timed_out else (128 - code if code < 0 else code),
            round(time.monotonic() - started, 2),
            output.decode("utf-8", "replace")[-OUTPUT_KEPT:],
            timed_out=timed_out,
        )
        if setup.api is not None:
            outcome.emulator = runner.merge_reports(report_dir)
        outcome.probes = [
            p for p in (_read_json(f) for f in sorted(probe_out.glob("probe-*.json"))) if isinstance(p, dict)
        ]
        if imports is not None:
            found = _read_json(imports_out)
            outcome.imports = found if isinstance(found, list) else []
        return outcome


def _kill_group(process: subprocess.Popen) -> None:
    """SIGTERM to the command's process group, SIGKILL what is left after a few seconds."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
