"""The contracts of a port: a file-type handler (``port(data, selection, options) -> Ported``, or ``PortError``) and
a project step (the work of a rule family on the project as a whole, before and after the per-file port)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
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


class ProjectStep:
    """The work of a rule family on the project as a whole, declared by the rule module that needs it (its
    ``PROJECT_STEPS``, listed in rules/registry.STEP_MODULES) and run by the engine for every run, in that order:
    ``facts`` before the per-file port (what every file must know, carried to the workers by the options: part of
    each file's cache key), ``after`` on the per-file results (edits across files). Each does nothing by default."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        return options

    def after(self, files: list[FileResult], options: PortOptions) -> None:
        return None
