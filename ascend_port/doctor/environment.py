"""What the doctor's checks read: an Environment (the environment variables, a folder standing in for ``/`` and a
runner for the commands it asks: ``npu-smi`` and the target Python). The real one reads this host; a recorded one
reads a folder (``env.json``, ``root/``, ``commands/``), so the tests run the checks unmodified on recorded hosts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Completed:
    """A command's exit status and output."""

    returncode: int
    stdout: str
    stderr: str = ""


# (key, argv, timeout) -> the command's result, or None when it cannot be started (not installed). The key names the
# question for a recorded host ("npu-smi-info", "npu-smi-health-0", "python-versions", "python-runtime"); the real
# runner runs argv.
Runner = Callable[[str, Sequence[str], float], "Completed | None"]


@dataclass(frozen=True)
class Environment:
    environ: Mapping[str, str]
    root: Path  # what stands for "/": the checks read root / "usr/local/Ascend/..."
    run: Runner
    python: str  # the target Python (its torch and torch-npu are checked)

    def path(self, absolute: str) -> Path:
        """The file that stands for an absolute path of the host."""
        return self.root / absolute.lstrip("/")

    def host_path(self, path: Path) -> str:
        """The host's absolute path of a file under root (what a fix command names)."""
        return "/" + path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)


def _run_real(key: str, argv: Sequence[str], timeout: float) -> Completed | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Completed(124, "", f"{argv[0]}: {error}")
    return Completed(done.returncode, done.stdout, done.stderr)


def real_environment(python: str | None = None) -> Environment:
    """This host: os.environ, the real "/", the real commands."""
    return Environment(environ=dict(os.environ), root=Path("/"), run=_run_real, python=python or sys.executable)


def recorded_environment(folder: Path) -> Environment:
    """A recorded host: ``env.json`` (the environment variables), ``root/`` (its files, standing for "/") and
    ``commands/<key>.out`` (a command's stdout; ``<key>.err`` its stderr, ``<key>.rc`` its exit status, 0 when
    absent). A key without a recording is a command that is not installed."""
    environ = json.loads((folder / "env.json").read_text("utf-8")) if (folder / "env.json").exists() else {}
    commands = folder / "commands"

    def replay(key: str, argv: Sequence[str], timeout: float) -> Completed | None:
        out = commands / f"{key}.out"
        if not out.exists():
            return None
        err, rc = commands / f"{key}.err", commands / f"{key}.rc"
        return Completed(
            int(rc.read_text().strip()) if rc.exists() else 0,
            out.read_text("utf-8"),
            err.read_text("utf-8") if err.exists() else "",
        )

    return Environment(environ=environ, root=folder / "root", run=replay, python="python3")
