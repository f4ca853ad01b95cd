"""Which files a run looks at: everything under the given paths that a file handler claims, minus what git
ignores, virtualenvs, build and cache folders, and ``--exclude`` globs. Symlinks are never followed."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
    "build",
    "dist",
    ".eggs",
    "site-packages",
    ".ascend-port",
    ".ipynb_checkpoints",
}


def _skipped_dir(folder: str, name: str) -> bool:
    return (
        name in SKIPPED_DIRS or name.endswith(".egg-info") or os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
    )


def _start_check_ignore(root: Path) -> subprocess.Popen | None:
    """``git check-ignore`` for the paths under ``root``, started before the tree is walked so that git's start-up
    (reading the index and the ignore files) overlaps the walk; None when git cannot be run."""
    try:
        return subprocess.Popen(
            ["git", "-C", str(root), "check-ignore", "--stdin", "-z"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError:
        return None


def _git_ignored(
    root: Path, candidates: list[Path], git: subprocess.Popen | None = None, absolute: list[str] | None = None
) -> set[Path]:
    """The candidates git ignores (.gitignore, .git/info/exclude, global excludes); empty outside a repository.
    ``git``: the process of _start_check_ignore(root), if started; ``absolute``: os.path.abspath of each candidate,
    if known."""
    if git is None:
        git = _start_check_ignore(root) if candidates else None
    if not candidates:
        if git is not None:
            git.kill()
            git.communicate()
        return set()
    if absolute is None:
        absolute = [os.path.abspath(p) for p in candidates]
    by_absolute = dict(zip(absolute, candidates))
    root_absolute = os.path.abspath(root)
    try:
        if git is None:
            raise OSError("git cannot be run")
        # File names are bytes: os.fsencode gives back a name that is not UTF-8 as it is on disk.
        stdout, _ = git.communicate(b"\0".join(map(os.fsencode, [root_absolute, *by_absolute])), timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        if git is not None:
            git.kill()
            git.communicate()
        return _gitignore_fallback(root, candidates)
    if git.returncode not in (0, 1):  # 128: not a git repository
        return _gitignore_fallback(root, candidates)
    ignored = {os.fsdecode(p) for p in stdout.split(b"\0") if p}
    if root_absolute in ignored:
        # The user named a folder their repository ignores (a vendored tree, a download): that is a choice;
        # apply only the folder's own .gitignore.
        return _gitignore_fallback(root, candidates)
    return {by_absolute[p] for p in ignored if p in by_absolute}


def _gitignore_fallback(root: Path, candidates: list[Path]) -> set[Path]:
    """Outside a git repository: the root .gitignore's plain patterns (no negation), matched like git does for
    the common cases (``*.py``, ``dir/``, ``/anchored``, ``a/**/b``)."""
    try:
        lines = (root / ".gitignore").read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return set()
    patterns = [ln.strip() for ln in lines if ln.strip() and not ln.startswith(("#", "!"))]
    ignored = set()
    for path in candidates:
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        parts = rel.split("/")
        for pattern in patterns:
            anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
            pat = pattern.strip("/")
            prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
            if pattern.endswith("/"):
                prefixes = prefixes[:-1]  # a directory pattern matches folders only
            if anchored:
                hit = any(fnmatch.fnmatch(p, pat) for p in prefixes)
            else:
                hit = any(fnmatch.fnmatch(p.rsplit("/", 1)[-1], pat) for p in prefixes)
            if hit:
                ignored.add(path)
                break
    return ignored


def _walk(root: Path) -> Iterator[tuple[Path, str]]:
    """Every regular file under ``root`` (no links, FIFOs or devices) and its path relative to ``root``, folder by
    folder in name order, a folder's files before its subfolders (the order of ``os.walk``, top-down)."""
    stack: list[tuple[Path, str, str]] = [(root, os.fspath(root), "")]
    while stack:
        here, folder, relative = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue  # an unreadable folder is passed over, as os.walk does
        files, folders = [], []
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False):  # d_type: no stat per file
                    files.append(entry.name)
                elif entry.is_dir(follow_symlinks=False) and not _skipped_dir(folder, entry.name):
                    folders.append(entry.name)
            except OSError:
                continue
        for name in sorted(files):
            yield here / name, relative + name
        for name in sorted(folders, reverse=True):
            stack.append((here / name, os.path.join(folder, name), f"{relative}{name}{os.sep}"))


def discover(paths: Iterable[Path], wanted: Callable[[Path], bool], exclude: Iterable[str] = ()) -> list[Path]:
    """Files under ``paths`` that ``wanted`` accepts; an explicitly named file is always taken if wanted."""
    patterns = list(exclude)
    found: dict[str, Path] = {}  # by real path: a file named twice, or through a link, is ported once
    for path in paths:
        if path.is_file():
            if wanted(path):
                found.setdefault(os.path.realpath(path), path)
            continue
        git = _start_check_ignore(path)
        try:
            candidates = [(p, relative) for p, relative in _walk(path) if wanted(p)]
        except BaseException:
            if git is not None:
                git.kill()
                git.communicate()
            raise
        root_absolute = os.path.abspath(path)
        ignored = _git_ignored(
            path, [p for p, _ in candidates], git, [os.path.join(root_absolute, relative) for _, relative in candidates]
        )
        real_root = os.path.realpath(path)
        for p, relative in candidates:
            if p not in ignored:
                found.setdefault(os.path.join(real_root, relative), p)
    return [p for p in found.values() if not _excluded(p, patterns)] if patterns else list(found.values())


def _excluded(path: Path, patterns: list[str]) -> bool:
    text = path.as_posix()
    return any(
        fnmatch.fnmatch(text, pat) or fnmatch.fnmatch(path.name, pat) or f"/{pat.strip('/')}/" in f"/{text}/"
        for pat in patterns
    )
