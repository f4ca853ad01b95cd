"""The dependency matrix: every third-party package the scanned project imports (Python files) or requires
(requirements files, ``pyproject.toml``), with what ascend-port knows about it on Ascend (``packages.py``).

Standard-library modules and the project's own modules (the stems of its files and the folders between them) are
not dependencies. Imports come from ``ast`` (a regular expression when a file does not parse).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.findings import FileResult
from ascend_port.reports.packages import (
    COMPATIBLE,
    NOT_APPLICABLE,
    REPLACE,
    STATUSES,
    UNSUPPORTED,
    distribution_for_import,
    lookup,
)


@dataclass
class Dependency:
    name: str
    status: str
    replacement: str
    note: str
    known: bool
    sources: list[str] = field(default_factory=list)  # "requirements.txt:3", "train.py" (imports it)
    imported: bool = False  # some scanned module imports it (a requirement alone is the port's business: NPU6xx)


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_][\w., \t]*))", re.MULTILINE
)


def _top_level_imports(text: str) -> set[str]:
    """Top-level names of the absolute imports of a module (``ast``; a regular expression if it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        names: set[str] = set()
        for m in _IMPORT.finditer(text):
            if m.group(1):
                names.add(m.group(1))
            else:
                names.update(part.split()[0].split(".")[0] for part in m.group(2).split(",") if part.strip())
        return names
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _local_names(paths: list[str]) -> set[str]:
    """Module and package names the scanned tree defines itself (``import model`` of ``model.py`` is not a
    dependency): the stems of its Python files and the folders between them and their common folder."""
    if not paths:
        return set()
    absolute = [os.path.abspath(p) for p in paths]
    common = os.path.commonpath([os.path.dirname(p) for p in absolute])
    names = {Path(common).name}
    for path in absolute:
        relative = Path(os.path.relpath(path, common))
        names.add(relative.stem)
        names.update(relative.parts[:-1])
    return names


def _requirement_lines(text: str) -> list[tuple[int, str]]:
    """(line, requirement) of a requirements file: comments, options and blank lines skipped."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            out.append((number, line))
    return out


def _pyproject_requirements(text: str) -> list[str]:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        data = tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    lists = [project.get("dependencies")]
    for group in ("optional-dependencies",):
        if isinstance(project.get(group), dict):
            lists.extend(project[group].values())
    if isinstance(data.get("dependency-groups"), dict):
        lists.extend(data["dependency-groups"].values())
    return [item for values in lists if isinstance(values, list) for item in values if isinstance(item, str)]


def dependencies(files: list[FileResult], texts: Mapping[str, bytes]) -> list[Dependency]:
    from ascend_port.port.filetypes import file_kind
    from ascend_port.rules.project.requirements import parse_requirement

    sources: dict[str, list[str]] = {}
    imported: set[str] = set()
    python = [f.path for f in files if f.path.endswith(".py") and f.path in texts]
    local = _local_names(python) | set(sys.stdlib_module_names) | {"__future__"}
    for file in files:
        data = texts.get(file.path)
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        kind = file_kind(Path(file.path))
        if kind == "requirements":
            for number, line in _requirement_lines(text):
                req = parse_requirement(line)
                if req is not None:
                    sources.setdefault(req.key, []).append(f"{file.path}:{number}")
        elif kind == "pyproject":
            for item in _pyproject_requirements(text):
                req = parse_requirement(item)
                if req is not None:
                    sources.setdefault(req.key, []).append(file.path)
        if file.path.endswith(".py"):
            for module in sorted(_top_level_imports(text) - local):
                sources.setdefault(distribution_for_import(module), []).append(file.path)
                imported.add(distribution_for_import(module))
    out = []
    for name, where in sources.items():
        package = lookup(name)
        if package is None:
            out.append(
                Dependency(
                    name,
                    NOT_APPLICABLE,
                    "",
                    "not in ascend-port's package table: check it has no CUDA-only code",
                    False,
                    list(dict.fromkeys(where)),
                    name in imported,
                )
            )
        else:
            out.append(
                Dependency(
                    name,
                    package.status,
                    package.replacement,
                    package.note,
                    True,
                    list(dict.fromkeys(where)),
                    name in imported,
                )
            )
    order = {UNSUPPORTED: 0, REPLACE: 1, COMPATIBLE: 2, NOT_APPLICABLE: 3}
    assert set(order) == set(STATUSES)
    return sorted(out, key=lambda d: (order[d.status], not d.known, d.name))
