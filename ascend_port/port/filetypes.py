"""Which project file (not ``.py``) a path is, by its name alone: discovery asks this for every file of a tree, so it
never reads the file and never imports a format library; the handler's module is imported on first use."""

from __future__ import annotations

import importlib
import re
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
_SKIPPED_FOLDERS = {".github", ".vscode", ".idea", ".devcontainer", "node_modules"}
# Matches every name that one of the tests below can take (and more): a name it does not match is no project file.
_MAYBE = re.compile(r"(?i)\.(?:txt|in|sh|bash|mk|ya?ml|json)$|dockerfile|containerfile|makefile")

_HANDLERS = {
    "requirements": ("ascend_port.rules.project.requirements_txt", "RequirementsHandler"),
    "pyproject": ("ascend_port.rules.project.pyproject", "PyprojectHandler"),
    "setup.py": ("ascend_port.port.setup_files", "SetupPyHandler"),
    "setup.cfg": ("ascend_port.port.setup_files", "SetupCfgHandler"),
    "shell": ("ascend_port.rules.project.shell", "ShellHandler"),
    "makefile": ("ascend_port.rules.project.makefile", "MakefileHandler"),
    "dockerfile": ("ascend_port.rules.project.dockerfile", "DockerfileHandler"),
    "yaml": ("ascend_port.rules.project.configs", "YamlHandler"),
    "conda": ("ascend_port.rules.project.conda", "CondaHandler"),
    "compose": ("ascend_port.rules.project.compose", "ComposeHandler"),
    "json": ("ascend_port.rules.project.configs", "JsonHandler"),
    "notebook": ("ascend_port.port.notebook", "NotebookHandler"),
}


def file_kind(path: Path) -> str | None:
    """The kind of project file ``path`` names, or None. ``setup.py`` is ``"setup.py"`` (a Python file too)."""
    name = path.name
    if name == "setup.py":
        return "setup.py"
    if name == "setup.cfg":
        return "setup.cfg"
    if name == "pyproject.toml":
        return "pyproject"
    if name.endswith(".ipynb"):
        return "notebook"
    if not _MAYBE.search(name):
        return None  # most files of a tree: one search instead of the tests below
    if _REQUIREMENTS.match(name) or (path.parent.name == "requirements" and name.endswith((".txt", ".in"))):
        return "requirements"
    if _SHELL.search(name):
        return "shell"
    if _MAKEFILE.search(name):
        return "makefile"
    if _DOCKERFILE.match(name):
        return "dockerfile"
    if any(part in _SKIPPED_FOLDERS for part in path.parts[:-1]):
        return None  # CI and editor settings describe the tools' machines, not the project's devices
    if _YAML.search(name):
        if "lock" in name.lower():
            return None
        if _CONDA.match(name):
            return "conda"
        return "compose" if _COMPOSE.match(name) else "yaml"
    if _JSON_CONFIG.match(name) and not _JSON_NOT_CONFIG.match(name):
        return "json"
    return None


@cache
def handler(kind: str):
    module, cls = _HANDLERS[kind]
    return getattr(importlib.import_module(module), cls)()
