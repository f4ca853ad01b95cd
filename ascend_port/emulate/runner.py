"""Run a command under the npu emulator: validate it, build its environment, run it, report what it used."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from ascend_port.core.words import counted
from ascend_port.emulate import hazards

STUB_DIR = Path(__file__).resolve().parent / "stub"
API_JSON = Path(__file__).resolve().parent.parent / "data" / "torch_npu_api.json"
DEVICES_ENV = "ASCEND_PORT_EMULATE_DEVICES"
REPORT_ENV = "ASCEND_PORT_EMULATE_REPORT"
API_ENV = "ASCEND_PORT_EMULATE_API"
EXIT_USAGE = 2
PYTHON_COMMANDS = "python/python3 (or a path to a Python interpreter), pytest, torchrun, or -m MODULE"
SUPPORTED = PYTHON_COMMANDS.replace(", or -m MODULE", ", -m MODULE, or ascend-port run -- COMMAND")
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


def resolve_command(command: list[str], tool: str = "emulate") -> tuple[list[str], str]:
    """The command to run and the Python interpreter that will run it; ``tool``: the ascend-port command that runs
    it (its messages name it; `emulate` also runs `ascend-port run`). Raises UsageError."""
    supported = SUPPORTED if tool == "emulate" else PYTHON_COMMANDS
    if not command:
        raise UsageError(
            f"no command to run: `ascend-port {tool} -- COMMAND [ARGS...]` with COMMAND one of {supported}"
        )
    first = command[0]
    if first == "-m":
        if len(command) < 2:
            raise UsageError(f"-m needs a module name: `ascend-port {tool} -- -m MODULE [ARGS...]`")
        return [sys.executable, *command], sys.executable
    if _is_python(first):
        interpreter = shutil.which(first) if os.sep not in first else first
        if interpreter is None or not os.access(interpreter, os.X_OK):
            raise UsageError(f"{first}: no such Python interpreter")
        return command, interpreter
    if tool == "emulate" and Path(first).name == "ascend-port" and command[1:2] == ["run"]:
        # `ascend-port emulate -- ascend-port run -- python train.py`: the unchanged program, ported as it imports,
        # on the emulated npu. The Python that matters is the one `run` launches.
        if shutil.which(first) is None:
            raise UsageError(f"{first}: not found on PATH")
        inner = command[command.index("--") + 1 :] if "--" in command else _first_command(command[2:])
        return command, resolve_command(inner)[1]
    if Path(first).name in ("pytest", "py.test", "torchrun"):
        if shutil.which(first) is None:
            raise UsageError(f"{first}: not found on PATH")
        return command, _shebang_interpreter(first) or sys.executable
    raise UsageError(f"{first!r} is not a supported command: ascend-port {tool} runs {supported}")


def _first_command(words: list[str]) -> list[str]:
    """The command in ``ascend-port run``'s words when they have no ``--``: from the first word that is one."""
    for i, word in enumerate(words):
        if word == "-m" or _is_python(word) or Path(word).name in ("pytest", "py.test", "torchrun"):
            return words[i:]
    return []


def real_torch_npu(interpreter: str) -> str | None:
    """The version of a real torch_npu distribution installed for ``interpreter`` (not imported), else None."""
    probe = (
        "import importlib.metadata as m\n"
        f"for name in {_REAL_DISTRIBUTIONS!r}:\n"
        "    try:\n        print(m.version(name)); break\n    except m.PackageNotFoundError:\n        pass\n"
    )
    result = run_probe(interpreter, probe)
    return (result.stdout.strip() or None) if result is not None else None


def run_probe(
    interpreter: str, code: str, args: list[str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str] | None:
    """``code`` run by ``interpreter`` (with ``args``) outside the emulator (no PYTHONPATH), None when it could not
    run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        return subprocess.run(
            [interpreter, "-c", code, *(args or [])], capture_output=True, text=True, env=env, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def target_api(version: str | None, folder: Path) -> tuple[str, Path]:
    """The torch_npu release to emulate (default: the newest covered; a torch version or line names its covered
    release, as in every command: npu_api.covered_release) and the file of its public names, written into
    ``folder``. Raises UsageError for a release the tool does not cover."""
    from ascend_port.core import npu_api

    try:
        names = npu_api.release_inventory(
            npu_api.covered_release(version) if version is not None else npu_api.releases()[-1].version
        )
    except ValueError as error:
        raise UsageError(f"--torch-npu {version}: {error}") from None
    path = folder / "torch_npu_api.json"
    path.write_text(json.dumps(names), "utf-8")
    return names["torch_npu_version"], path


def python_path_with(folder: Path, env: Mapping[str, str]) -> str:
    """``env``'s PYTHONPATH with ``folder`` first (its empty entries dropped: one would put the working directory
    on the path)."""
    return os.pathsep.join([str(folder), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])


def build_environment(devices: int, report_dir: str | None, api: Path = API_JSON) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path_with(STUB_DIR, env)
    env[DEVICES_ENV] = str(devices)
    env[API_ENV] = str(api)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "1")
    if report_dir:
        env[REPORT_ENV] = report_dir
    else:
        env.pop(REPORT_ENV, None)
    return env


# The sections of a process's report (see stub/torch_npu/_report.py), in the order the summary shows them.
SECTIONS = {
    "calls": "torch_npu / torch.npu calls",
    "contract_violations": "fused-op calls whose arguments broke the op's contract",
    "absent": "names the target torch_npu {version} lacks (AttributeError raised)",
    "not_implemented": "not emulated (NotImplementedError raised)",
    "notes": "where the emulator ran differently from a real NPU",
    "writes": "torch_npu / torch.npu settings written",
}
# The operators that reached the npu, per process (not in the final report: judged into hazards.SECTIONS).
OP_STATS = "op_stats"
# Counted apart, not shown name by name: calls and lookups made by torch's own code (torch.compile's probes).
INTERNAL = "torch_internal"
STAYED_ON_CPU = (
    "never put a tensor on the npu (stayed on the CPU): the port usually left a "
    '`"cuda" if torch.cuda.is_available() else "cpu"` choice, or a device string that is not npu'
)


def read_reports(folder: Path) -> list[dict]:
    """The JSON reports the processes wrote into ``folder`` (one each); one that cannot be read is left out."""
    reports = []
    for path in sorted(folder.glob("*.json")):
        try:
            reports.append(json.loads(path.read_text("utf-8")))
        except (OSError, ValueError):
            continue
    return reports


def merge_reports(folder: Path) -> dict:
    merged: dict[str, Counter[str]] = {section: Counter() for section in [*SECTIONS, INTERNAL]}
    reports = read_reports(folder)
    # A process whose children computed on the npu launched them (torch.multiprocessing.spawn): not one that stayed
    # on the CPU.
    launchers = {data.get("ppid") for data in reports if data.get("npu_allocated")}
    stayed: list[str] = []
    for data in reports:
        for section, counts in merged.items():
            counts.update(data.get(section, {}))
        if data.get("npu_allocated") is False and data.get("pid") not in launchers:
            stayed.append(f"pid {data.get('pid')}: {' '.join(data.get('argv') or [])}".rstrip(": "))
    processes = len(reports)
    return {
        "processes": processes,
        **{section: dict(sorted(counts.items())) for section, counts in merged.items()},
        "stayed_on_cpu": len(stayed),
        "stayed_on_cpu_processes": stayed,
    }


def run_hazards(folder: Path, target: str, api: Path) -> dict[str, dict]:
    """The hazard sections (hazards.SECTIONS) of the processes' reports in ``folder`` on torch_npu ``target``, whose
    names are in ``api``."""
    stats = hazards.merge([data.get(OP_STATS) or {} for data in read_reports(folder)])
    npu_names = set(json.loads(api.read_text("utf-8")).get("npu", []))
    return hazards.judge(stats, target, npu_names)


def has_torch(interpreter: str) -> bool | None:
    """Can ``interpreter`` import torch (found, not imported)? None when the probe itself fails."""
    result = run_probe(interpreter, "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)")
    return result.returncode == 0 if result is not None else None


def _summary(report: dict, exit_code: int, interpreter: str) -> str:
    head = f"ascend-port emulate: exit code {exit_code}"
    target = f"(torch_npu {report['torch_npu']})"
    if report["processes"]:
        head += f", {counted(report['processes'], 'process', 'processes')} reported {target}"
    elif has_torch(interpreter) is False:
        head += f" {target}; no process loaded torch: {interpreter} has no torch (install CPU torch for it)"
    else:
        head += f" {target}; no process loaded torch, so none used the stand-in torch_npu"
    lines = [head]
    if report.get("stayed_on_cpu"):
        lines.append(f"  {counted(report['stayed_on_cpu'], 'process', 'processes')} {STAYED_ON_CPU}:")
        lines += [f"    {process}" for process in report["stayed_on_cpu_processes"]]
    for section, title in SECTIONS.items():
        if report[section]:
            lines.append(f"  {title.format(version=report['torch_npu'])}:")
            lines += [f"    {name}: {count}" for name, count in report[section].items()]
    lines += hazards.summary_lines(report)
    if report.get(INTERNAL):
        lines.append(
            f"  (not counted: {sum(report[INTERNAL].values())} call(s) and lookup(s) made by torch's own code)"
        )
    return "\n".join(lines)


def run_emulated(
    command: list[str], devices: int, report: Path | None, force: bool, torch_npu: str | None = None
) -> int:
    """Run ``command`` under the emulator as torch_npu ``torch_npu`` (default: the newest covered release); its exit
    code, or 2 for a usage error (printed to stderr)."""
    with tempfile.TemporaryDirectory(prefix="ascend-port-emulate-") as scratch:
        folder = Path(scratch)
        try:
            if devices < 1:
                raise UsageError("--devices must be at least 1")
            argv, interpreter = resolve_command(list(command))
            target, api = target_api(torch_npu, folder)
            refuse_real_torch_npu(interpreter, force)
        except UsageError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_USAGE
        reports = folder / "reports"
        reports.mkdir()
        exit_code = run_command(argv, build_environment(devices, str(reports), api))
        if exit_code is None:
            return EXIT_USAGE
        merged = {
            "command": list(command),
            "devices": devices,
            "torch_npu": target,
            "exit_code": exit_code,
            **merge_reports(reports),
        }
        merged.update(run_hazards(reports, target, api))
    print(_summary(merged, exit_code, interpreter), file=sys.stderr)
    if report is not None:
        try:
            report.write_text(json.dumps(merged, indent=2) + "\n", "utf-8")
        except OSError as error:
            print(f"error: cannot write {report}: {error.strerror or error}", file=sys.stderr)
    return exit_code


def refuse_real_torch_npu(interpreter: str, force: bool) -> None:
    version = None if force else real_torch_npu(interpreter)
    if version is not None:
        raise UsageError(
            f"a real torch_npu ({version}) is installed for {interpreter}: the emulator's stand-in would shadow it. "
            "Run in an environment without torch_npu, or pass --force"
        )


def run_command(argv: list[str], env: dict[str, str]) -> int | None:
    """The command's exit code (128 + N when killed by signal N, 130 on Ctrl-C); None when it cannot start."""
    try:
        exit_code = subprocess.call(argv, env=env)
    except OSError as error:
        print(f"error: cannot run {argv[0]}: {error.strerror or error}", file=sys.stderr)
        return None
    except KeyboardInterrupt:
        return 130
    return 128 - exit_code if exit_code < 0 else exit_code
