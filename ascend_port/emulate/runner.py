"""Run a command under the npu emulator: validate it, build its environment, run it, report what it used."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

STUB_DIR = Path(__file__).resolve().parent / "stub"
API_JSON = Path(__file__).resolve().parent.parent / "data" / "torch_npu_api.json"
DEVICES_ENV = "ASCEND_PORT_EMULATE_DEVICES"
REPORT_ENV = "ASCEND_PORT_EMULATE_REPORT"
API_ENV = "ASCEND_PORT_EMULATE_API"
EXIT_USAGE = 2
SUPPORTED = "python/python3 (or a path to a Python interpreter), pytest, torchrun, or -m MODULE"
_REAL_DISTRIBUTIONS = ("torch-npu", "torch_npu")


class UsageError(Exception):
    pass


def _is_python(word: str) -> bool:
    name = Path(word).name
    if name.startswith("python") and all(c.isdigit() or c in ".w" for c in name[6:].removesuffix(".exe")):
        return True
    return False


def _shebang_interpreter(program: str) -> str | None:
    path = shutil.which(program)
    if path is None:
        return None
    try:
        with open(path, "rb") as stream:
            first = stream.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if words and Path(words[0]).name == "env" and len(words) > 1:
        return shutil.which(words[-1])
    return words[0] if words else None


def resolve_command(command: list[str]) -> tuple[list[str], str]:
    """The command to run and the Python interpreter that will run it. Raises UsageError."""
    if not command:
        raise UsageError(
            f"no command to run: `ascend-port emulate -- COMMAND [ARGS...]` with COMMAND one of {SUPPORTED}"
        )
    first = command[0]
    if first == "-m":
        if len(command) < 2:
            raise UsageError("-m needs a module name: `ascend-port emulate -- -m MODULE [ARGS...]`")
        return [sys.executable, *command], sys.executable
    if _is_python(first):
        interpreter = shutil.which(first) if os.sep not in first else first
        if interpreter is None or not os.access(interpreter, os.X_OK):
            raise UsageError(f"{first}: no such Python interpreter")
        return command, interpreter
    if Path(first).name in ("pytest", "py.test", "torchrun"):
        if shutil.which(first) is None:
            raise UsageError(f"{first}: not found on PATH")
        return command, _shebang_interpreter(first) or sys.executable
    raise UsageError(f"{first!r} is not a supported command: ascend-port emulate runs {SUPPORTED}")


def real_torch_npu(interpreter: str) -> str | None:
    """The version of a real torch_npu distribution installed for ``interpreter`` (not imported), else None."""
    probe = (
        "import importlib.metadata as m\n"
        f"for name in {_REAL_DISTRIBUTIONS!r}:\n"
        "    try:\n        print(m.version(name)); break\n    except m.PackageNotFoundError:\n        pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        result = subprocess.run([interpreter, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None


def build_environment(devices: int, report_dir: str | None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(STUB_DIR)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[DEVICES_ENV] = str(devices)
    env[API_ENV] = str(API_JSON)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "1")
    if report_dir:
        env[REPORT_ENV] = report_dir
    else:
        env.pop(REPORT_ENV, None)
    return env


def merge_reports(folder: Path) -> dict:
    calls: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    processes = 0
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        processes += 1
        calls.update(data.get("calls", {}))
        missing.update(data.get("not_implemented", {}))
    return {
        "processes": processes,
        "calls": dict(sorted(calls.items())),
        "not_implemented": dict(sorted(missing.items())),
    }


def _summary(report: dict, exit_code: int) -> str:
    lines = [f"ascend-port emulate: exit code {exit_code}, {report['processes']} process(es) reported"]
    if report["calls"]:
        lines.append("  torch_npu / torch.npu calls:")
        lines += [f"    {name}: {count}" for name, count in report["calls"].items()]
    if report["not_implemented"]:
        lines.append("  not emulated (NotImplementedError raised):")
        lines += [f"    {name}: {count}" for name, count in report["not_implemented"].items()]
    return "\n".join(lines)


def run_emulated(command: list[str], devices: int, report: Path | None, force: bool) -> int:
    """Run ``command`` under the emulator; its exit code, or 2 for a usage error (printed to stderr)."""
    try:
        if devices < 1:
            raise UsageError("--devices must be at least 1")
        argv, interpreter = resolve_command(list(command))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    version = real_torch_npu(interpreter)
    if version is not None and not force:
        print(
            f"error: a real torch_npu ({version}) is installed for {interpreter}: the emulator's stand-in would "
            "shadow it. Run in an environment without torch_npu, or pass --force",
            file=sys.stderr,
        )
        return EXIT_USAGE
    with tempfile.TemporaryDirectory(prefix="ascend-port-emulate-") as folder:
        env = build_environment(devices, folder)
        try:
            exit_code = subprocess.call(argv, env=env)
            if exit_code < 0:  # killed by a signal: the shell's convention
                exit_code = 128 - exit_code
        except OSError as error:
            print(f"error: cannot run {argv[0]}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            exit_code = 130
        merged = merge_reports(Path(folder))
    merged = {"command": list(command), "devices": devices, "exit_code": exit_code, **merged}
    print(_summary(merged, exit_code), file=sys.stderr)
    if report is not None:
        try:
            report.write_text(json.dumps(merged, indent=2) + "\n", "utf-8")
        except OSError as error:
            print(f"error: cannot write {report}: {error.strerror or error}", file=sys.stderr)
    return exit_code
