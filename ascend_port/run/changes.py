"""``--changed-since REF``: the files of a pull request. A file counts as changed when the commits since the merge
base of REF and HEAD change it (``git diff REF...HEAD``), when it differs from HEAD in the index or the working
tree, or when it is untracked and not ignored. Deleted files are left out: there is nothing to port."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ascend_port.run.discovery import Exclude


class ChangesError(Exception):
    """git could not answer; the message says why."""


def _git(root: Path, *args: str) -> list[str]:
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ChangesError(f"cannot run git: {error}") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ChangesError(message[-1] if message else f"git {args[0]} failed with status {result.returncode}")
    return [p for p in result.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def repository_root(start: Path) -> Path:
    folder = start if start.is_dir() else start.parent
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except ChangesError as error:
        raise ChangesError(f"--changed-since needs a git repository ({folder}): {error}") from None
    return Path(top[0].strip())


def changed_files(root: Path, ref: str) -> set[Path]:
    """Absolute paths of the files changed since ``ref`` in the repository at ``root``."""
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except ChangesError:
        raise ChangesError(f"--changed-since: {ref!r} is not a commit, branch or tag of {root}") from None
    names = _git(root, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", f"{ref}...HEAD", "--")
    names += _git(root, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", "HEAD", "--")
    names += _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    return {(root / name).resolve() for name in names}


def restrict(files: Iterable[Path], changed: set[Path]) -> list[Path]:
    """The discovered ``files`` that are among ``changed`` (compared as resolved absolute paths)."""
    return [f for f in files if f.resolve() in changed]


def changed_paths(paths: list[Path], exclude: tuple[Exclude, ...], ref: str) -> list[Path]:
    """The files a run over ``paths`` would look at that changed since ``ref``."""
    from ascend_port.port.handlers import handler_for
    from ascend_port.run.discovery import discover

    changed: set[Path] = set()
    for root in dict.fromkeys(repository_root(p) for p in paths):
        changed |= changed_files(root, ref)
    return restrict(discover(paths, lambda p: handler_for(p) is not None, exclude), changed)
