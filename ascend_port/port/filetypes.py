"""Which project file (not ``.py``) a path is, by its name alone: discovery asks this for every file of a tree, so it
never reads the file and never imports a format library; the handler's module is imported on first use."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_REQUIREMENTS = re.compile(r"(?i)^(?:.*[-_.])?(?:requirements|constraints)(?:[-_.].*)?\.(?:txt|in)$")
_SHELL = re.compile(r"(?i)\.(?:sh|bash)$")
_MAKEFILE = re.compile(r"^(?:[Mm]akefile|GNUmakefile)$|\.mk$")
_DOCKERFILE = re.compile(r"(?i)^(?:dockerfile(?:[._-].*)?|.*[._-]dockerfile|containerfile(?:[._-].*)?)$")
_YAML = re.compile(r"(?i)\.ya?ml$")
# conda environment files and Docker Compose files: YAML with a meaning of their own (packages, containers).
_CONDA = re.compile(r"(?i)^(?:.*[-_.])?(?:environment|conda)(?:[-_.].*)?\.ya?ml$")
_COMPOSE = re.compile(r"(?i)^(?:.*[-_.])?(?:docker-)?compose(?:[-_.].*)?\.ya?ml$")
# JSON configs only: DeepSpeed (ds_config*.json, zero2.json, zero3_offload.json), accelerate/FSDP configs and
# anything called *config*; never package manifests, editor/tool settings, or data files.
_JSON_CONFIG = re.compile(
    r"(?i)^(?:.*config.*|ds[_-].*|.*deepspeed.*|zero[_-]?\d.*|zero[_-]?stage.*|.*accelerate.*"
    r"|fsdp.*)\.json$"
)
_JSON_NOT_CONFIG = re.compile(
    r"(?i)^(?:package(?:-lock)?|tsconfig.*|jsconfig.*|composer|\.?eslintrc.*|"
    r"\.?babel.*|tslint|lerna|vercel|renovate|devcontainer|launch|settings|tasks|"
    r"extensions|manifest)\.json$"
)
# Folders of CI and editor settings: they describe the tools' machines, not the project's devices (their YAML and
# JSON files are left alone).
_TOOL_FOLDERS = frozenset({".github", ".vscode", ".idea", ".devcontainer", "node_modules"})
# Matches every name that a pattern below can take (and more): a name it does not match is no project file.
_MAYBE = re.compile(r"(?i)\.(?:txt|in|sh|bash|mk|ya?ml|json)$|dockerfile|containerfile|makefile")


@dataclass(frozen=True)
class FileFormat:
    """A kind of project file: how its name is recognised and the handler that ports it (``module``, ``handler``:
    imported on first use). Adding a format is one entry of FORMATS and its handler's module."""

    kind: str
    module: str
    handler: str
    matches: Callable[[Path], bool]
    in_tool_folders: bool = True  # False: not under .github/, .vscode/ and the like (see _TOOL_FOLDERS)


def _named(*names: str) -> Callable[[Path], bool]:
    return lambda path: path.name in names


def _pattern(pattern: re.Pattern[str], *, also_in_folder: str = "", but_not: str = "") -> Callable[[Path], bool]:
    """A name ``pattern`` searches (a .txt/.in file of a folder named ``also_in_folder`` too), unless it holds
    ``but_not`` (case aside)."""

    def matches(path: Path) -> bool:
        name = path.name
        if but_not and but_not in name.lower():
            return False
        if pattern.search(name):
            return True
        return bool(also_in_folder) and path.parent.name == also_in_folder and name.endswith((".txt", ".in"))

    return matches


def _json_config(path: Path) -> bool:
    return bool(_JSON_CONFIG.match(path.name)) and not _JSON_NOT_CONFIG.match(path.name)


# In the order a name is tried: the first format that matches it is the file's kind. First those known by their
# name alone, then those whose names _MAYBE matches.
_BY_NAME = (
    FileFormat("setup.py", "ascend_port.port.setup_files", "SetupPyHandler", _named("setup.py")),
    FileFormat("setup.cfg", "ascend_port.port.setup_files", "SetupCfgHandler", _named("setup.cfg")),
    FileFormat("pyproject", "ascend_port.rules.project.pyproject", "PyprojectHandler", _named("pyproject.toml")),
    FileFormat("notebook", "ascend_port.port.notebook", "NotebookHandler", lambda path: path.name.endswith(".ipynb")),
)
_BY_PATTERN = (
    FileFormat(
        "requirements",
        "ascend_port.rules.project.requirements_txt",
        "RequirementsHandler",
        _pattern(_REQUIREMENTS, also_in_folder="requirements"),
    ),
    FileFormat("shell", "ascend_port.rules.project.shell", "ShellHandler", _pattern(_SHELL)),
    FileFormat("makefile", "ascend_port.rules.project.makefile", "MakefileHandler", _pattern(_MAKEFILE)),
    FileFormat("dockerfile", "ascend_port.rules.project.dockerfile", "DockerfileHandler", _pattern(_DOCKERFILE)),
    FileFormat("conda", "ascend_port.rules.project.conda", "CondaHandler", _pattern(_CONDA, but_not="lock"), False),
    FileFormat(
        "compose", "ascend_port.rules.project.compose", "ComposeHandler", _pattern(_COMPOSE, but_not="lock"), False
    ),
    FileFormat("yaml", "ascend_port.rules.project.configs", "YamlHandler", _pattern(_YAML, but_not="lock"), False),
    FileFormat("json", "ascend_port.rules.project.configs", "JsonHandler", _json_config, False),
)
FORMATS = (*_BY_NAME, *_BY_PATTERN)
_BY_KIND = {f.kind: f for f in FORMATS}


def file_kind(path: Path) -> str | None:
    """The kind of project file ``path`` names, or None. ``setup.py`` is ``"setup.py"`` (a Python file too)."""
    for form in _BY_NAME:
        if form.matches(path):
            return form.kind
    if not _MAYBE.search(path.name):
        return None  # most files of a tree: one search instead of the tests below
    in_tool_folder: bool | None = None
    for form in _BY_PATTERN:
        if not form.in_tool_folders:
            if in_tool_folder is None:
                in_tool_folder = any(part in _TOOL_FOLDERS for part in path.parts[:-1])
            if in_tool_folder:
                return None
        if form.matches(path):
            return form.kind
    return None


@cache
def handler(kind: str):
    form = _BY_KIND[kind]
    return getattr(importlib.import_module(form.module), form.handler)()
