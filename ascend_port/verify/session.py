"""`verify`: run the project's commands under the emulator with the probe, one after the other, and gather per
command whether it started, why not, and what the probe saw."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ascend_port.verify import execute
from ascend_port.verify.classify import Failure, classify
from ascend_port.verify.commands import Command, Todos

STARTED_CODES = {"pytest": (0, 5)}  # pytest's 5: no test collected (nothing failed)
OUTPUT_TAIL = 40  # lines of a failed command's output kept in the report


@dataclass
class Result:
    name: str
    argv: list[str]
    kind: str
    started: bool
    exit_code: int | None
    seconds: float
    timed_out: bool = False
    failure: Failure | None = None
    todo_lines_hit: dict[str, list[int]] = field(default_factory=dict)  # path -> TODO comment lines whose code ran
    npu_calls: dict[str, int] = field(default_factory=dict)
    absent: dict[str, int] = field(default_factory=dict)
    not_implemented: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    dtypes_on_npu: dict[str, int] = field(default_factory=dict)
    syncs_in_loops: dict[str, int] = field(default_factory=dict)
    compute_dtypes: dict[str, int] = field(default_factory=dict)  # dtype of the matmuls/convolutions on the npu
    float32_only: str = ""  # computed in float32 alone, and the code it ran picks bf16/fp16 beside a CUDA check here
    stayed_on_cpu: bool = False
    losses: list[float] = field(default_factory=list)
    output_tail: str = ""

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Verification:
    root: str
    torch_npu: str
    results: list[Result] = field(default_factory=list)
    interrupted: bool = False
    compare: list[dict] = field(default_factory=list)
    reference: dict | None = None
    errors: list[str] = field(default_factory=list)  # what could not be written (the report is written anyway)

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if not r.started]


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root.resolve()))
    except ValueError:
        return path


HALF_PRECISION = re.compile(r"\b(?:bfloat16|float16|bf16|fp16)\b|\.half\(\)")
CUDA_WORD = re.compile(r"cuda", re.IGNORECASE)
NEAR = 3  # lines either side of a CUDA check where a half-precision choice counts as made for CUDA


@functools.cache
def _half_precision_for_cuda(path: str) -> int | None:
    """The first line that names a half-precision dtype within NEAR lines of a CUDA mention: a float32-only run
    through that file may have missed a dtype chosen only for CUDA (`if torch.cuda.is_available(): dtype =
    torch.bfloat16`). None where there is none (a `mixed_precision="fp16"` option alone is no such choice)."""
    try:
        lines = Path(path).read_text("utf-8", "replace").splitlines()
    except OSError:
        return None
    cuda = [i for i, line in enumerate(lines) if CUDA_WORD.search(line)]
    for i in cuda:
        for j in range(max(0, i - NEAR), min(len(lines), i + NEAR + 1)):
            if HALF_PRECISION.search(lines[j]):
                return j + 1
    return None


def _facts(result: Result, outcome: execute.Outcome, root: Path, todos: Todos) -> dict[str, list[int]]:
    """Fill the run-time facts; returns the TODO code lines that ran (real path -> lines) for the classifier."""
    hits: dict[str, set[int]] = {}
    dtypes: Counter[str] = Counter()
    syncs: Counter[str] = Counter()
    compute: Counter[str] = Counter()
    loaded: set[str] = set()
    for probe in outcome.probes:
        for path, lines in probe.get("todo_lines_hit", {}).items():
            hits.setdefault(path, set()).update(lines)
        dtypes.update(probe.get("dtypes_on_npu", {}))
        syncs.update(probe.get("syncs_in_loops", {}))
        compute.update(probe.get("compute_dtypes", {}))
        loaded.update(probe.get("project_files", []))
        if probe.get("losses") and not result.losses:
            result.losses = probe["losses"]
    report = outcome.emulator
    result.npu_calls = report.get("calls", {})
    result.absent = report.get("absent", {})
    result.not_implemented = report.get("not_implemented", {})
    result.notes = report.get("notes", {})
    result.todo_lines_hit = {
        _relative(path, root): sorted(todos.by_file.get(path, {}).get(line, line) for line in lines)
        for path, lines in sorted(hits.items())
    }
    shown = {
        f"{k.split(' at ')[0]} at {_relative(k.split(' at ', 1)[1], root)}" if " at " in k else k: v
        for k, v in dtypes.items()
    }
    result.dtypes_on_npu = dict(sorted(shown.items()))
    result.syncs_in_loops = {
        f"{k.split(' at ')[0]} at {_relative(k.split(' at ', 1)[1], root)}": v for k, v in sorted(syncs.items())
    }
    result.compute_dtypes = dict(compute.most_common())
    if set(compute) == {"float32"}:
        found = ((path, _half_precision_for_cuda(path)) for path in sorted(loaded))
        result.float32_only = next((f"{_relative(path, root)}:{line}" for path, line in found if line), "")
    # (the probe sees the devices only while it watches dtypes: ASCEND_PORT_PROBE_DTYPES=0 leaves this unknown)
    torch_used = [p for p in outcome.probes if p.get("torch_imported") and p.get("device_watch", True)]
    # (an import or a --help need not touch the device: only what runs the program can stay on the CPU)
    if result.kind in ("config", "pytest") and "stayed_on_cpu" in report:  # the emulator's own verdict, when it has one
        result.stayed_on_cpu = bool(report["stayed_on_cpu"])
    elif result.kind in ("config", "pytest") and torch_used:
        result.stayed_on_cpu = not any(p.get("npu_tensors") for p in torch_used)
    return {path: sorted(lines) for path, lines in hits.items()}


def _result(command: Command, outcome: execute.Outcome, root: Path, todos: Todos) -> Result:
    ok = STARTED_CODES.get(command.kind, (0,))
    started = outcome.exit_code in ok and not outcome.timed_out and outcome.error is None
    result = Result(
        command.name, command.argv, command.kind, started, outcome.exit_code, outcome.seconds, outcome.timed_out
    )
    _facts(result, outcome, root, todos)
    result.stayed_on_cpu = result.stayed_on_cpu and started  # (a failure may come before the device is chosen)
    if outcome.error is not None:
        result.failure = Failure("program", outcome.error)
    elif outcome.timed_out:
        result.failure = Failure("timeout", f"no exit within {command.timeout:g} s (killed)")
        result.output_tail = "\n".join(outcome.output.splitlines()[-OUTPUT_TAIL:])
    elif not started:
        result.failure = classify(outcome.output, root, outcome.emulator, todos.by_file)
        result.output_tail = "\n".join(outcome.output.splitlines()[-OUTPUT_TAIL:])
    return result


def _import_results(command: Command, outcome: execute.Outcome, root: Path, todos: Todos) -> list[Result]:
    """One result per module of the import process (a timeout or crash fails the modules it did not reach). The
    process's facts go on the first module's result; a module's failure is judged by its own traceback."""
    results = []
    base = _result(command, outcome, root, todos)
    done = {entry["module"]: entry for entry in outcome.imports}
    for _, module in command.modules:
        entry = done.get(module)
        name = f"import {module}"
        if entry is None:
            failure = base.failure or Failure("program", "not reached (the import process ended before it)")
            results.append(
                Result(name, ["import", module], "import", False, outcome.exit_code, 0.0, outcome.timed_out, failure)
            )
            continue
        ok = bool(entry["ok"])
        result = Result(name, ["import", module], "import", ok, 0 if ok else 1, entry.get("seconds", 0.0))
        if not ok:
            result.failure = classify(entry["traceback"], root, outcome.emulator, todos.by_file)
            result.output_tail = entry["traceback"]
        results.append(result)
    if results:
        _facts(results[0], outcome, root, todos)
    return results


def run_commands(
    commands: list[Command],
    setup: execute.Setup,
    todos: Todos,
    verification: Verification,
    progress: Callable[[Command, list[Result]], None] = lambda c, r: None,
) -> None:
    """Run each command; Ctrl-C stops after killing the running one (``verification.interrupted``)."""
    with tempfile.TemporaryDirectory(prefix="ascend-port-verify-todos-") as scratch:
        if todos.by_file:
            setup.todos_file = Path(scratch) / "todos.json"
            setup.todos_file.write_text(json.dumps(todos.code_lines()), "utf-8")
        try:
            for command in commands:
                modules = command.modules if command.kind == "import" else None
                outcome = execute.run(command.argv, setup, command.timeout, modules)
                if command.kind == "import":
                    results = _import_results(command, outcome, Path(setup.root), todos)
                else:
                    results = [_result(command, outcome, Path(setup.root), todos)]
                verification.results.extend(results)
                progress(command, results)
        except KeyboardInterrupt:  # (execute.run has killed the running command's process group)
            verification.interrupted = True
