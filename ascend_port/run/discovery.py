"""Which files a run looks at: everything under the given paths that a file handler claims, minus what git
ignores, virtualenvs, build and cache folders, and ``--exclude`` globs. Symlinks are never followed.

Ignore rules apply only to a folder that is part of a git repository (see ``_GitProbe.in_repository``): a release
tarball or an sdist is ported whole, whatever ``.gitignore`` it ships, even when it is unpacked inside another
repository. The files that ignore rules or ``--exclude`` leave out are returned as ``Skipped`` for the output and
the reports; the folders skipped by name (``SKIPPED_DIRS``, virtualenvs) are not walked, so not counted.

Two kinds of exclude globs, as in ruff: ``--exclude`` (a plain string) is matched against each file's path as it was
reached from the paths given (relative to the current folder when those are), against its name, and as a folder
name anywhere in that path; a pyproject.toml's ``exclude`` (``AnchoredGlob``) is relative to that file's folder,
wherever the command runs from."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeAlias

from ascend_port.core.porting import SKIPPED_DIRS


@dataclass(frozen=True)
class AnchoredGlob:
    """An ``exclude`` glob of a pyproject.toml, relative to ``root`` (its folder, resolved). One without ``/`` names
    a file or folder anywhere below the root (``vendored``, ``*_pb2.py``); one with ``/`` is a path from the root
    (``third_party/*``, ``/docs``, ``src/**/gen``), and a folder it names takes everything under it."""

    pattern: str
    root: str

    def __str__(self) -> str:
        return self.pattern

    def matches(self, real: str) -> bool:
        """Whether the file at ``real`` (its resolved path) is excluded."""
        pattern = self.pattern.strip().removeprefix("./").strip("/")
        relative = os.path.relpath(real, self.root)
        inside = relative != os.pardir and not relative.startswith(os.pardir + os.sep)
        parts = relative.split(os.sep) if inside else [os.path.basename(real)]
        if "/" not in pattern:
            return any(fnmatch.fnmatch(part, pattern) for part in parts)
        if not inside:
            return False  # (a path from the root cannot name a file outside it)
        patterns = (pattern, pattern[3:]) if pattern.startswith("**/") else (pattern,)
        prefixes = ("/".join(parts[:end]) for end in range(1, len(parts) + 1))
        return any(fnmatch.fnmatch(prefix, p) for prefix in prefixes for p in patterns)


Exclude: TypeAlias = str | AnchoredGlob  # (--exclude, or a pyproject.toml's)


def _skipped_dir(folder: str, name: str) -> bool:
    return (
        name in SKIPPED_DIRS or name.endswith(".egg-info") or os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
    )


class Skipped(NamedTuple):
    """A file a handler would port that discovery leaves out, and why: ``kind`` is ``gitignore`` (``rule`` is the
    ignore file, line and pattern, as ``git check-ignore -v`` names them) or ``exclude`` (``rule`` is the glob)."""

    path: str
    kind: str
    rule: str

    @property
    def reason(self) -> str:
        return f"ignored by git ({self.rule})" if self.kind == "gitignore" else f"excluded by {self.rule!r}"


def _git(root: Path, *args: str, pipes: int = subprocess.PIPE) -> subprocess.Popen | None:
    """``git -C root ARGS``, started (not waited for), its stdin and stdout ``pipes``; None when git cannot be run."""
    try:
        return subprocess.Popen(["git", "-C", str(root), *args], stdin=pipes, stdout=pipes, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _end(process: subprocess.Popen | None) -> None:
    if process is not None and process.returncode is None:
        process.kill()
        process.communicate()


class _GitProbe:
    """What git says about a folder, asked before the tree is walked so that git's start-up (reading the index and
    the ignore files) overlaps the walk: ``git check-ignore`` for the candidates and, for a folder that is not the
    top of a work tree, whether its repository tracks anything under it."""

    def __init__(self, root: Path) -> None:
        self.check = _git(root, "check-ignore", "--stdin", "-z", "--verbose")
        self.tracked = None
        if self.check is not None and not os.path.lexists(os.path.join(root, ".git")):
            self.tracked = _git(root, "ls-files", "--error-unmatch", "--", ".", pipes=subprocess.DEVNULL)

    def close(self) -> None:
        _end(self.check)
        _end(self.tracked)

    def in_repository(self) -> bool:
        """Whether the folder's files belong to a git repository, so that its ignore rules speak for them: the
        folder is the top of a work tree (it holds ``.git``: a fresh ``git init`` counts) or the repository tracks
        files under it. An unpacked tarball inside some other repository (a home folder kept in git, a monorepo
        that never added it) is not that repository's."""
        if self.tracked is None:
            return self.check is not None  # the folder holds .git itself
        try:
            return self.tracked.wait(timeout=120) == 0  # 1: nothing tracked under it; 128: not a repository
        except subprocess.TimeoutExpired:
            return False


def _git_ignored(root: Path, candidates: list[Path], absolute: list[str], probe: _GitProbe) -> dict[Path, str]:
    """The candidates git ignores (.gitignore, .git/info/exclude, global excludes), each with the rule that ignores
    it. Empty where ``root`` is not part of a git repository (see _GitProbe.in_repository): a tree that is not a
    repository (a release tarball, an sdist) has no ignore rules, whatever .gitignore it ships, as with git, ruff
    and ripgrep; and empty where its repository ignores ``root`` itself (the user named it: a vendored tree, a
    download). ``absolute``: os.path.abspath of each candidate."""
    git = probe.check
    if git is None or not candidates:
        probe.close()
        return {}
    by_absolute = dict(zip(absolute, candidates))
    root_absolute = os.path.abspath(root)
    try:
        # File names are bytes: os.fsencode gives back a name that is not UTF-8 as it is on disk.
        stdout, _ = git.communicate(b"\0".join(map(os.fsencode, [root_absolute, *by_absolute])), timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        probe.close()
        return {}
    if git.returncode not in (0, 1) or not probe.in_repository():
        # 128: not a git repository, or git failed (a path inside a submodule): no file is dropped.
        probe.close()
        return {}
    fields = stdout.split(b"\0")
    ignored: dict[str, tuple[str, str, str]] = {}
    for source, line, pattern, path in zip(fields[0::4], fields[1::4], fields[2::4], fields[3::4]):
        if not pattern.startswith(b"!"):  # --verbose also names the paths a negated pattern takes back in
            ignored[os.fsdecode(path)] = (os.fsdecode(source), os.fsdecode(line), os.fsdecode(pattern))
    if root_absolute in ignored or not ignored:
        return {}
    top = root_absolute if os.path.lexists(os.path.join(root_absolute, ".git")) else _top(root)
    shown: dict[str, str] = {}  # each ignore file as the candidates are named (git names it from the top)
    for source, _, _ in ignored.values():
        if source not in shown:
            where = os.path.relpath(os.path.join(top, source), root_absolute)
            shown[source] = source if os.path.isabs(source) else os.path.normpath(os.path.join(root, where))
    return {
        by_absolute[p]: f"{shown[source]}:{line}: {pattern}"
        for p, (source, line, pattern) in ignored.items()
        if p in by_absolute
    }


def _top(folder: Path) -> str:
    """The top of the work tree that holds ``folder`` (absolute), or ``folder`` itself where git cannot say."""
    try:
        top = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    except OSError:
        return os.path.abspath(folder)
    return top.stdout.strip() if top.returncode == 0 and top.stdout.strip() else os.path.abspath(folder)


def _ignored(root: Path, candidates: list[tuple[Path, str]], probe: _GitProbe) -> dict[Path, str]:
    """_git_ignored for the candidates found under ``root`` (with their paths relative to it): those in a nested
    repository (a submodule, a clone inside the tree) are asked of that repository, for git answers nothing about
    the files of a submodule (``check-ignore`` stops: "Pathspec ... is in submodule")."""
    root_absolute = os.path.abspath(root)
    owners: dict[str, str] = {}
    groups: dict[str, tuple[list[Path], list[str]]] = {}
    for p, relative in candidates:
        path = os.path.join(root_absolute, relative)
        group = groups.setdefault(_repository_of(os.path.dirname(path), root_absolute, owners), ([], []))
        group[0].append(p)
        group[1].append(path)
    ignored = _git_ignored(root, *groups.pop(root_absolute, ([], [])), probe)
    for nested, (paths, absolute) in groups.items():
        folder = root / os.path.relpath(nested, root_absolute)  # named as the candidates are
        ignored.update(_git_ignored(folder, paths, absolute, _GitProbe(folder)))
    return ignored


def _repository_of(folder: str, top: str, owners: dict[str, str]) -> str:
    """The innermost folder from ``folder`` (under ``top``, both absolute) up to ``top`` that holds ``.git``, or
    ``top``. ``owners``: the answers so far, by folder (each folder is looked at once)."""
    if len(folder) <= len(top):
        return top
    if folder not in owners:
        here = os.path.lexists(os.path.join(folder, ".git"))
        owners[folder] = folder if here else _repository_of(os.path.dirname(folder), top, owners)
    return owners[folder]


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


def discover(
    paths: Iterable[Path],
    wanted: Callable[[Path], bool],
    exclude: Iterable[Exclude] = (),
    skipped: list[Skipped] | None = None,
) -> list[Path]:
    """Files under ``paths`` that ``wanted`` accepts; an explicitly named file is always taken if wanted (unless
    ``exclude`` names it). ``skipped``: where to add the wanted files that ignore rules or ``exclude`` leave out."""
    patterns = list(exclude)
    found: dict[str, Path] = {}  # by real path: a file named twice, or through a link, is ported once
    left_out: dict[str, Skipped] = {}
    for path in paths:
        if path.is_file():
            if wanted(path):
                found.setdefault(os.path.realpath(path), path)
            continue
        probe = _GitProbe(path)
        try:
            candidates = [(p, relative) for p, relative in _walk(path) if wanted(p)]
        except BaseException:
            probe.close()
            raise
        ignored = _ignored(path, candidates, probe)
        real_root = os.path.realpath(path)
        for p, relative in candidates:
            real = os.path.join(real_root, relative)
            if p not in ignored:
                found.setdefault(real, p)
            elif real not in found:
                left_out.setdefault(real, Skipped(os.fspath(p), "gitignore", ignored[p]))
    files = []
    for real, p in found.items():
        pattern = _excluded(p, real, patterns) if patterns else None
        if pattern is None:
            files.append(p)
            left_out.pop(real, None)  # also found through another path that does not ignore it
        else:
            left_out[real] = Skipped(os.fspath(p), "exclude", pattern)
    if skipped is not None:
        skipped.extend(left_out.values())
    return files


def _excluded(path: Path, real: str, patterns: list[Exclude]) -> str | None:
    """The first of ``patterns`` that matches ``path`` (resolved: ``real``), or None."""
    text = path.as_posix()
    for pat in patterns:
        if isinstance(pat, AnchoredGlob):
            if pat.matches(real):
                return pat.pattern
        elif fnmatch.fnmatch(text, pat) or fnmatch.fnmatch(path.name, pat) or f"/{pat.strip('/')}/" in f"/{text}/":
            return pat
    return None
