"""The dependency matrix: every third-party package the scanned project imports (Python files) or requires
(requirements files, ``pyproject.toml``), with what ascend-port knows about it on Ascend (``packages.py``).

Rows are distributions, as ``pip install`` names them (``cv2`` is opencv-python, ``_pytest`` is pytest:
``packages.distribution_for_import``). Standard-library modules, private modules (``_C``) and the project's own
modules (the stems of its files and the folders between them) are not dependencies. Imports come from ``ast`` (a
regular expression when a file does not parse), kept by a hash of the file's bytes in the tool's cache folder
(``ImportCache``), so a warm report parses nothing.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_port.core.findings import FileResult
from ascend_port.reports.packages import (
    COMPATIBLE,
    NAMESPACE_PACKAGES,
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


# Statement lists an import can sit in (module, class and function bodies, branches, handlers, match cases): the
# walk visits statements only, never expressions, which is a tenth of ``ast.walk``'s nodes.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _top(module: str) -> str:
    """The name a module is installed by: its top-level package, or two levels of a namespace package
    (``google.protobuf``: protobuf, not "google")."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in NAMESPACE_PACKAGES and len(parts) > 1 else parts[0]


def _top_level_imports(text: str) -> set[str]:
    """Top-level names of the absolute imports of a module (``ast``; a regular expression if it does not parse)."""
    if "import" not in text:
        return set()
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
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found.update(_top(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.add(_top(node.module))
        else:
            for name in _BODIES:
                stack.extend(getattr(node, name, ()))
    return found


PARALLEL_FROM = 200  # modules to parse per extra worker process (below that, forking costs more than it saves)


def _key(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _imports_of(data: bytes) -> list[str]:
    return sorted(_top_level_imports(data.decode("utf-8", errors="replace")))


class ImportCache:
    """The top-level imports of each module by a hash of its bytes, kept between runs in the tool's cache folder
    (``imports-N.json``): a warm report parses no file. Stale or garbled data is a miss; writes go through a
    temporary file and ``os.replace``, so parallel runs never read a half-written file. The entries of this run are
    kept, and older ones up to ``KEEP`` in all."""

    VERSION = 2  # bump when _top_level_imports changes what it finds
    KEEP = 50_000

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / f"imports-{self.VERSION}.json" if folder is not None else None
        self.entries: dict[str, list[str]] = {}
        self.used: dict[str, list[str]] = {}
        self.dirty = False
        if self.path is not None:
            try:
                data = json.loads(self.path.read_text("utf-8"))
                if isinstance(data, dict):
                    self.entries = {k: v for k, v in data.items() if isinstance(v, list)}
            except (OSError, ValueError):
                pass

    def imports(self, data: bytes) -> set[str]:
        key = _key(data)
        names = self.entries.get(key)
        if names is None or not all(isinstance(n, str) for n in names):
            names = _imports_of(data)
            self.entries[key] = names
            self.dirty = True
        self.used[key] = names
        return set(names)

    def fill(self, datas: list[bytes]) -> None:
        """Find the imports of the modules the cache does not know, on all cores when there are many (a cold
        cache on a large tree: parsing is the whole cost)."""
        missing: dict[str, bytes] = {}
        for data in datas:
            key = _key(data)
            if key not in self.entries:
                missing.setdefault(key, data)
        if not missing:
            return
        jobs = min(os.cpu_count() or 1, max(1, len(missing) // PARALLEL_FROM))
        if jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=jobs) as pool:
                found = list(pool.map(_imports_of, missing.values(), chunksize=32))
        else:
            found = [_imports_of(data) for data in missing.values()]
        self.entries.update(zip(missing, found))
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        kept = dict(self.used)
        for key, names in self.entries.items():
            if len(kept) >= self.KEEP:
                break
            kept.setdefault(key, names)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(kept, separators=(",", ":")), "utf-8")
            os.replace(temporary, self.path)
        except OSError:
            pass  # a read-only cache folder only costs the next run its parse


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
    project: dict[str, Any] = data["project"] if isinstance(data.get("project"), dict) else {}
    lists = [project.get("dependencies")]
    for group in ("optional-dependencies",):
        if isinstance(project.get(group), dict):
            lists.extend(project[group].values())
    if isinstance(data.get("dependency-groups"), dict):
        lists.extend(data["dependency-groups"].values())
    return [item for values in lists if isinstance(values, list) for item in values if isinstance(item, str)]


def dependencies(
    files: list[FileResult], texts: Mapping[str, bytes], cache_folder: Path | None = None
) -> list[Dependency]:
    """The matrix of the scanned files (``texts``: their bytes as scanned). ``cache_folder`` keeps the imports of
    each module between runs (``ImportCache``); None parses every module."""
    from ascend_port.formats.requirement import parse_requirement
    from ascend_port.port.filetypes import file_kind

    sources: dict[str, list[str]] = {}
    imported: set[str] = set()
    cache = ImportCache(cache_folder)
    python = [f.path for f in files if f.path.endswith(".py") and f.path in texts]
    local = _local_names(python) | set(sys.stdlib_module_names) | {"__future__"}
    cache.fill([texts[path] for path in python])
    for file in files:
        data = texts.get(file.path)
        if data is None:
            continue
        kind = file_kind(Path(file.path))
        if kind in ("requirements", "pyproject"):
            text = data.decode("utf-8", errors="replace")
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
            for module in sorted(cache.imports(data) - local):
                distribution = distribution_for_import(module)
                if distribution is not None:
                    sources.setdefault(distribution, []).append(file.path)
                    imported.add(distribution)
    cache.save()
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
