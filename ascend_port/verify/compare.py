"""`verify --compare`: the original project (``--original PATH``, or the git ref before the port extracted into a
temporary folder) run on plain CPU with the same seed as the port under the emulator; the first losses side by
side, and the reference JSON the kit checks a real NPU against."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from ascend_port.verify import execute
from ascend_port.verify.classify import last_line, last_traceback
from ascend_port.verify.commands import Command
from ascend_port.verify.kit import TOLERANCES
from ascend_port.verify.session import Result

MADE_BY = "Made by ascend-port "  # git/workflow.MADE_BY (a layer above verify): the port's commits say so
RTOL, ATOL = 1e-3, 1e-5  # float32: the emulator computes on the CPU, as the original does


def tolerance(port: Result | None) -> tuple[str, float, float]:
    """The compute dtype of the port's run (its matmuls on the npu) and the tolerances its losses are held to: a
    bf16/fp16 autocast on the npu against the original's float32 on CPU differs by that dtype's rounding."""
    dtypes = set(port.compute_dtypes) if port is not None else set()
    for name, dtype in (("bf16", "bfloat16"), ("fp16", "float16")):
        if dtype in dtypes:
            return (name, *TOLERANCES[name])
    return "fp32", RTOL, ATOL


class CompareError(Exception):
    pass


def _git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise CompareError(f"git {' '.join(args)} in {root}: {result.stderr.strip() or 'failed'}")
    return result.stdout


def base_ref(root: Path) -> str:
    """The commit before the port: below the commits ascend-port made on HEAD, else HEAD when the port is
    uncommitted in the work tree."""
    ref = "HEAD"
    for line in _git(root, "log", "--format=%H%x00%B%x01", "-n", "200").split("\x01"):
        sha, _, message = line.strip().partition("\x00")
        if not sha:
            continue
        if MADE_BY not in message:
            break
        ref = f"{sha}~1"
    if ref == "HEAD" and not _git(root, "status", "--porcelain", "--untracked-files=no").strip():
        raise CompareError(
            f"{root}: no ascend-port commit on HEAD and no uncommitted port: name the original with --base REF or "
            "--original PATH"
        )
    return ref


def extract(root: Path, ref: str, folder: Path) -> Path:
    """``git archive`` of ``ref`` (the project's folder in it) unpacked into ``folder``."""
    prefix = _git(root, "rev-parse", "--show-prefix").strip()
    data = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", ref], capture_output=True)
    if data.returncode != 0:
        raise CompareError(f"git archive {ref}: {data.stderr.decode('utf-8', 'replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as archive:
        archive.extractall(folder, filter="data") if hasattr(tarfile, "data_filter") else archive.extractall(folder)
    original = folder / prefix if prefix else folder
    _link_untracked(root, original)
    return original


NOT_LINKED = {".git", ".ascend-port", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache"}


def _link_untracked(root: Path, original: Path) -> None:
    """The files git does not hold (a dataset prepared in data/, a checkpoint, ignored or not) are linked into
    the original's tree where it has no file of that name: the original needs them as much as the port."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "-z", "."], capture_output=True, text=True)
    for name in listed.stdout.split("\0") if listed.returncode == 0 else ():
        if not name or NOT_LINKED & set(Path(name).parts):
            continue
        target = original / name
        if target.exists() or target.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to((root / name).resolve())


def compare(
    commands: list[Command], results: list[Result], original: Path, seed: int, losses: int
) -> tuple[list[dict], dict]:
    """Each command run on plain CPU in ``original``; its losses beside the port's (``results``, run with the
    same seed). Returns the side-by-side entries and the reference."""
    entries, runs = [], []
    by_name = {r.name: r for r in results}
    setup = execute.Setup(original, api=None, seed=seed, losses=losses)
    for command in commands:
        outcome = execute.run(command.original_argv or command.argv, setup, command.timeout)
        port = by_name.get(command.name)
        theirs: list[float] = next((p["losses"] for p in outcome.probes if p.get("losses")), [])
        ours = port.losses if port is not None else []
        dtype, rtol, atol = tolerance(port)
        run = {"name": command.name, "argv": command.argv, "losses": theirs, "dtype": dtype, "rtol": rtol, "atol": atol}
        if command.original_argv:
            run["original_argv"] = command.original_argv
        runs.append(run)
        diffs = [abs(a - b) for a, b in zip(theirs, ours)]
        if outcome.timed_out:
            verdict = f"the original timed out on CPU (after {command.timeout:g} s): no reference"
        elif outcome.exit_code != 0:
            why = last_traceback(outcome.output)[1] or last_line(outcome.output) or outcome.error or "no output"
            verdict = f"the original failed on CPU (exit {outcome.exit_code}: {why}): no reference"
        elif not theirs or not ours:
            verdict = "no losses recorded (no .backward() on a scalar)"
        elif all(abs(a - b) <= atol + rtol * abs(a) for a, b in zip(theirs, ours)):
            verdict = f"match ({dtype}: rtol {rtol:g}, atol {atol:g}): {len(diffs)} losses, largest difference {max(diffs):.3g}"
        else:
            first = next(i for i, (a, b) in enumerate(zip(theirs, ours)) if abs(a - b) > atol + rtol * abs(a))
            verdict = (
                f"differ from step {first} ({dtype}: rtol {rtol:g}, atol {atol:g}): largest difference {max(diffs):.3g}"
            )
        entries.append(
            {
                "name": command.name,
                "original": theirs,
                "port": ours,
                "max_diff": max(diffs) if diffs else None,
                "verdict": verdict,
            }
        )
    return entries, {"seed": seed, "rtol": RTOL, "atol": ATOL, "runs": runs}
