"""`apply --no-git`: the port written over the files themselves, the counterpart of the git transaction
(git/workflow.py) for a tree without one. A file that cannot be written becomes an error of the result and keeps
its old content; a file the port creates (the shared attention helpers) is never written over an existing one; a
Ctrl-C finishes the file in hand (no half-written or temporary file is left) and stops."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.interrupts import DeferredInterrupt, test_sigint
from ascend_port.core.sources import read_only, write_atomic
from ascend_port.run.engine import RunResult


@dataclass
class Writing:
    """What ``write_in_place`` did: the files written, in order, and those a Ctrl-C left as they were."""

    written: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    interrupted: bool = False


def write_in_place(result: RunResult) -> Writing:
    """Write the changed files of ``result``: the modules the port creates first, so that a file that imports the
    shared helpers never lands without them."""
    pending = sorted(result.changed, key=lambda file: file.path not in result.created)
    writing = Writing()
    with DeferredInterrupt() as interrupt:
        for file in pending:
            if interrupt.fired:
                break
            try:
                if file.path in result.created:
                    with open(file.path, "xb") as handle:  # (exclusive: the shared helpers' plan saw no such file)
                        handle.write(file.new_bytes or b"")
                else:
                    _refuse_read_only(Path(file.path))
                    write_atomic(Path(file.path), file.new_bytes or b"")
                writing.written.append(file.path)
            except OSError as error:
                file.error = f"cannot write: {error.strerror or error}"
                file.new_bytes = None
            test_sigint(f"written:{len(writing.written)}", lambda: interrupt.fired)
    if interrupt.fired:
        writing.interrupted = True
        writing.left = [f.path for f in pending if f.path not in writing.written and f.changed]
    return writing


def _refuse_read_only(path: Path) -> None:
    """A read-only file is not rewritten (black and ruff refuse it too, "Permission denied"): the atomic replace
    would succeed in a writable folder and silently drop the protection."""
    if read_only(path):
        raise PermissionError(13, "Permission denied (the file is read-only)", str(path))
