"""`ascend-port run`: the project ported in memory (prepare.py), the program launched with the bootstrap on its path
(command.py), and at exit what it ran ported: the modules each process imported from their ports, the TODOs they
carry, and the `apply` command that makes the port permanent."""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ascend_port.core.findings import FileResult
from ascend_port.core.words import counted
from ascend_port.emulate.runner import python_path_with, read_reports, run_command
from ascend_port.onthefly.command import BOOTSTRAP
from ascend_port.onthefly.prepare import Prepared, prepare
from ascend_port.run.engine import RunResult

MANIFEST_ENV = "ASCEND_PORT_RUN_MANIFEST"
REPORT_ENV = "ASCEND_PORT_RUN_REPORT"
EXIT_USAGE = 2


class NotStarted(Exception):
    """The program could not be started; what stopped it is printed."""


@dataclass
class Launch:
    """What the program ran: its exit code and the real paths of the ported modules some process imported."""

    exit_code: int
    served: set[str]
    notes: list[str]


def environment(manifest: Path, reports: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path_with(BOOTSTRAP, env)
    env[MANIFEST_ENV] = str(manifest)
    env[REPORT_ENV] = str(reports)
    return env


def launch(argv: list[str], notes: list[str], result: RunResult) -> tuple[Prepared, Launch]:
    """Run ``argv`` (command.launch_command's) with ``result``'s port served to its imports. Raises NotStarted for a
    command that did not start."""
    with tempfile.TemporaryDirectory(prefix="ascend-port-run-") as scratch:
        folder = Path(scratch)
        prepared = prepare(result, folder)
        reports = folder / "reports"
        reports.mkdir()
        exit_code = run_command(argv, environment(prepared.manifest, reports))
        if exit_code is None:
            raise NotStarted  # (run_command said why)
        served = {path for data in read_reports(reports) for path in data.get("served", ())}
    return prepared, Launch(exit_code, served, notes)


def _todos(file: FileResult) -> list[str]:
    return [f"{file.path}:{f.line}: {f.rule.id} [{f.confidence.label}] {f.message}" for f in file.findings if f.todo]


def _rewrites(file: FileResult) -> int:
    return sum(1 for f in file.findings if f.applied and f.rewrites)


NAMES_SHOWN = 5  # files named in a line of the summary (--report names them all)


def _names(files: list[FileResult], shown: int = NAMES_SHOWN) -> str:
    names = ", ".join(f.path for f in files[:shown])
    return names + (f" and {len(files) - shown} more" if len(files) > shown else "")


def summary(prepared: Prepared, ran: Launch, apply_command: str, verbose: bool = False) -> list[str]:
    """What stderr says at exit."""
    imported = [f for path, f in prepared.modules.items() if path in ran.served]
    others = [f for path, f in prepared.modules.items() if path not in ran.served]
    todos = [line for f in imported for line in _todos(f)]
    head = f"ascend-port run: exit code {ran.exit_code}; torch_npu {prepared.result.target}: "
    if not prepared.modules:
        return [head + "the port changes no Python module of the project: the program ran as it is"]
    lines = [head + f"{counted(len(imported), 'module')} ported on the fly, {counted(len(todos), 'TODO')}"]
    for file in imported:
        lines.append(f"  {file.path}: {counted(_rewrites(file), 'rewrite')}")
    if todos:
        lines.append("  TODOs in the modules it imported (work the port leaves to a person):")
        lines += [f"    {line}" for line in todos]
    if others:
        names = f": {_names(others, len(others))}" if verbose else ""
        lines.append(f"  {counted(len(others), 'other module')} the port changes, not imported{names}")
    if prepared.others:
        count = len(prepared.others)
        lines.append(
            f"  not ported on the fly: {counted(count, 'file')} that are not Python ({_names(prepared.others)})"
        )
    lines += [f"  note: {note}" for note in ran.notes]
    lines.append(f"to make the port permanent: {apply_command}")
    return lines


def report(prepared: Prepared, ran: Launch, command: list[str], apply_command: str) -> dict:
    """The JSON of --report: the same facts as the summary, every module and TODO named."""

    def module(file: FileResult) -> dict:
        return {
            "path": file.path,
            "rewrites": _rewrites(file),
            "todos": [
                {"line": f.line, "rule": f.rule.id, "confidence": f.confidence.label, "message": f.message}
                for f in file.findings
                if f.todo
            ],
        }

    return {
        "command": command,
        "exit_code": ran.exit_code,
        "torch_npu": prepared.result.target,
        "imported": [module(f) for p, f in prepared.modules.items() if p in ran.served],
        "not_imported": [f.path for p, f in prepared.modules.items() if p not in ran.served],
        "not_python": [f.path for f in prepared.others],
        "notes": ran.notes,
        "apply": apply_command,
    }


def apply_command(project: Path, flags: dict[str, str | None]) -> str:
    words = ["ascend-port", "apply", str(project)]
    for flag, value in flags.items():
        if value is not None:
            words += [flag, value]
    return shlex.join(words)
