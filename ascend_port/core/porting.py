"""The contracts of a port: a file-type handler (``port(data, selection, options) -> Ported``, or ``PortError``) and
a project step (the work of a rule family on the project as a whole, before and after the per-file port)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from ascend_port.core.findings import FileResult, Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.sources import Source


class PortError(Exception):
    """The file cannot be ported; the message says why, and the file is left untouched."""


@dataclass
class Ported:
    source: Source
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)


class Handler(Protocol):
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported: ...


# Folders no run walks: version control, virtualenvs, caches, build output.
SKIPPED_DIRS = frozenset(
    {
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
)


class Project(Protocol):
    """What a project step reads of the project a run ports (run/project_facts.ProjectFacts)."""

    @property
    def folder(self) -> Path:
        """The folder given (or the folder of the file given), resolved."""
        ...

    @property
    def top(self) -> Path:
        """The top of the project: the folder of its repository, pyproject.toml or setup.py."""
        ...

    @property
    def files(self) -> Sequence[Path]:
        """The files the run ports."""
        ...

    @property
    def pin_files(self) -> Sequence[Path]:
        """The files that may pin its requirements: those from ``folder`` up to ``top``, then the run's own."""
        ...


class WrittenModule(Protocol):
    """A module a project step writes for several ported files (the shared attention helpers)."""

    @property
    def path(self) -> Path:
        """Where it goes (absolute)."""
        ...

    @property
    def text(self) -> str: ...

    @property
    def existing(self) -> bool:
        """The file is there already (an earlier run wrote it)."""
        ...


class CrossFileEdit(Protocol):
    """What a project step's ``plan`` does across the ported files: the modules it writes, and for each ported
    file the rewrite that makes it use them."""

    @property
    def modules(self) -> Sequence[WrittenModule]: ...

    @property
    def notes(self) -> Sequence[str]:
        """What the user should know (the modules it could not write, and why)."""
        ...

    @property
    def domain(self) -> str:
        """The rule family whose commit the modules join in the git workflow, as a rule-ID prefix (``NPU4``)."""
        ...

    def rewrite(self, path: Path, data: bytes) -> bytes:
        """``data``, a version of the ported file ``path`` (absolute), using the modules; unchanged if it has no
        part in them."""
        ...


class ProjectStep:
    """The work of a rule family on the project as a whole, declared by the rule module that needs it (its
    ``PROJECT_STEPS``, listed in rules/registry.STEP_MODULES) and run by the engine for every run, in that order:
    ``facts`` before the per-file port (what every file must know, carried to the workers by the options: part of
    each file's cache key); ``plan`` on the ported texts, after the per-file port, the result cache and any review
    (modules written once for several files, and the edits that make those files use them); ``after`` on the
    per-file results (their wording across files, and notes for the user). Each does nothing by default."""

    # The module-level functions the rule family writes into the files it ports, each with those it calls: a
    # review keeps a definition with every accepted change that calls it (git/review.py).
    definitions: Mapping[str, tuple[str, ...]] = MappingProxyType({})

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        return options

    def plan(
        self, texts: Sequence[tuple[Path, str]], options: PortOptions, roots: Sequence[Path]
    ) -> CrossFileEdit | None:
        """``texts``: each ported Python file (absolute path) and its new text; ``roots``: the folders the run was
        given (absolute), where the step may write."""
        return None

    def after(self, files: list[FileResult], options: PortOptions) -> Sequence[str]:
        """What the user should know about the run as a whole (stderr notes)."""
        return ()
