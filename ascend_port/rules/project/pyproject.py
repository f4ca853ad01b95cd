"""pyproject.toml: ``[project]`` dependencies and optional dependencies, ``[dependency-groups]`` (PEP 735), and
Poetry's dependency tables (``poetry.py``).

tomlkit reads the document (and rejects invalid TOML with its reason); the edits replace the bytes of the items
they change; the result is read again with tomlkit and must hold exactly the intended values, every other value
unchanged. ``[build-system] requires`` is not touched: it is what builds the package, not what runs it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ascend_port.core.findings import FileResult
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError, Project, ProjectStep
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_text
from ascend_port.formats.requirement import Requirement, parse_requirement
from ascend_port.formats.textedit import Edit, TextPort, newline_of
from ascend_port.formats.tomlspans import ArraySpan, TomlScanError, array_spans
from ascend_port.rules.project.poetry import Expected, PoetryPort
from ascend_port.rules.project.reqlist import Change, ListItem, RequirementList, edit_list
from ascend_port.rules.project.requirements import NPU_EXTRA, TORCH_NPU_DEPENDENCY, torch_npu_verdict
from ascend_port.rules.project.requirements_txt import CPU_BUILD, CUDA_INDEX


@dataclass(frozen=True)
class NewList:
    table: tuple[str, ...]  # where the new list is: ("project", "optional-dependencies") or ("dependency-groups",)
    values: list[str]


def _parse(text: str) -> dict[str, Any]:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text).unwrap()
    except TOMLKitError as error:
        raise PortError(f"invalid TOML: {error}") from None


def _dependency_arrays(data: dict[str, Any]) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    project = data.get("project")
    if isinstance(project, dict):
        if isinstance(project.get("dependencies"), list):
            paths.append(("project", "dependencies"))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            paths.extend(("project", "optional-dependencies", k) for k, v in extras.items() if isinstance(v, list))
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        paths.extend(("dependency-groups", k) for k, v in groups.items() if isinstance(v, list))
    return paths


def _get(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def port_pyproject(text: str, selection: Selection) -> TextPort:
    data = _parse(text)
    port = TextPort(text, selection)
    paths = _dependency_arrays(data)
    changes: dict[tuple[str, ...], Change] = {}
    try:
        spans = array_spans(text) if paths else {}
    except TomlScanError as error:
        raise PortError(f"cannot locate the dependency arrays: {error}") from None
    for path in paths:
        values = _get(data, path)
        span = spans.get(path)
        strings = [v for v in values if isinstance(v, str)]
        if span is None or len(span.strings) != len(strings) or len(strings) != len(values):
            continue  # a layout the scanner does not address (or mixed tables in a group): left as it is
        items = tuple(ListItem(s, e, v) for (s, e), v in zip(span.strings, strings))
        core, npu = path == ("project", "dependencies"), path[-1] == NPU_EXTRA and len(path) > 2
        change = edit_list(
            port,
            RequirementList(
                ".".join(path[1:]) if path[0] == "project" else ".".join(path), items, span.statement_start
            ),
            add_torch_npu=npu,
            port_items=core or npu,
        )
        if change is not None:
            changes[path] = change
    added = _add_npu_extra(port, data, spans)
    poetry = PoetryPort(port, data).run()  # [tool.poetry.*dependencies] tables: the same decisions
    new_text = port.result()
    if new_text is not None:
        _verify(new_text, data, changes, poetry, added)
    return port


def _add_npu_extra(port: TextPort, data: dict[str, Any], spans: dict[tuple[str, ...], ArraySpan]) -> NewList | None:
    """torch-npu in an extra of its own, ``npu`` (a dependency group where the file declares no project): never in
    the core dependencies (every user of a package would get it, and without Ascend's CANN its autoload makes
    ``import torch`` fail) nor in the other extras and groups (one bound to a CUDA wheel index installs a CUDA torch,
    which torch-npu refuses; a CPU one is for hosts without an NPU). It pairs with the core dependencies' torch, or
    brings the torch of the first extra that pins one."""
    if not port.enabled(TORCH_NPU_DEPENDENCY):
        return None
    planned = _planned_extra(port.text, data, spans)
    if planned is None:
        return None
    table, where, requirement, found, anchor = planned
    if not found.new_requirement or anchor is None:
        offset = spans[where].statement_start if where in spans else 0
        why = found.reason if not found.new_requirement else "the extras are laid out too unusually to add one"
        port.report(TORCH_NPU_DEPENDENCY, offset, f"add an `{NPU_EXTRA}` extra with torch-npu by hand ({why})")
        return None
    values = [found.new_requirement + requirement.marker]
    if where[-1] != "dependencies":
        values.insert(0, requirement.text)  # (the extra brings the torch that the core dependencies do not)
    at, header, prefix = anchor
    newline = newline_of(port.text)
    items = ", ".join(f'"{v}"' for v in values)
    lines = f"{prefix}{NPU_EXTRA} = [{items}]{newline}"
    before = port.text[:at]
    if at and not before.endswith(("\n", "\r")):
        before += newline
        lines = newline + lines  # (the text ends without a line break)
    if header:  # a table of its own, a blank line above it and (before the next table) below it
        lines = f"[{'.'.join(table)}]{newline}{lines}" + (newline if at < len(port.text) else "")
        if at and not before.endswith(newline * 2):
            lines = newline + lines
    kind, install = (
        ("an extra", f"pip install .[{NPU_EXTRA}]")
        if table[0] == "project"
        else ("a dependency group", f"uv sync --group {NPU_EXTRA}")
    )
    message = (
        f"torch-npu added as {kind} of its own, `{NPU_EXTRA}` ({found.reason}): install it with `{install}`; "
        f"{CPU_BUILD}; what the project installed before installs on every host as it did"
    )
    if not port.fix(TORCH_NPU_DEPENDENCY, at, [Edit(at, at, lines)], message):
        return None
    return NewList(table, values)


def _planned_extra(text: str, data: dict[str, Any], spans: dict[tuple[str, ...], ArraySpan]):
    """(its table, the list whose torch it pairs with, that torch, the verdict, where it goes) for the npu extra the
    port would add; None where it adds none (no table for it, one there already, dynamic extras, no torch)."""
    project = data.get("project")
    table = ("project", "optional-dependencies") if isinstance(project, dict) else ("dependency-groups",)
    if table[0] not in data or NPU_EXTRA in _table_at(data, table):
        return None  # (no table to add it to; or the project has an npu extra already: ported as a list)
    if isinstance(project, dict) and "optional-dependencies" in (project.get("dynamic") or ()):
        return None  # (its extras are the build backend's, setup.py's extras_require: a table here is an error)
    torch = _torch_to_pair(data, table)
    placed = torch_npu_verdict([torch[1]]) if torch is not None else None
    if torch is None or placed is None:
        return None
    return table, torch[0], torch[1], placed[1], _anchor(text, table, spans)


def _torch_to_pair(data: dict[str, Any], table: tuple[str, ...]) -> tuple[tuple[str, ...], Requirement] | None:
    """The torch requirement the new extra pairs with, and the list it is in: the core dependencies' (the extra adds
    torch-npu alone), else that of the first extra or group that has one (the extra brings it too)."""
    first: tuple[tuple[str, ...], Requirement] | None = None
    for path in _dependency_arrays(data):
        if path[: len(table)] != table and path != ("project", "dependencies"):
            continue
        for value in _get(data, path):
            requirement = parse_requirement(value) if isinstance(value, str) else None
            if requirement is not None and requirement.key == "torch":
                if path == ("project", "dependencies"):
                    return path, requirement
                first = first or (path, requirement)
                break
    return first


def _table_at(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The table at ``path``, or an empty one where the document has none."""
    try:
        found = _get(data, path)
    except (KeyError, TypeError):
        return {}
    return found if isinstance(found, dict) else {}


def _anchor(text: str, table: tuple[str, ...], spans: dict[tuple[str, ...], ArraySpan]) -> tuple[int, bool, str] | None:
    """Where the new extra's line goes, whether its table header must go with it, and the key's prefix: after the
    last list of the table when each is a line ``name = [...]`` of its own header's table, or each a dotted key
    ``optional-dependencies.name = [...]`` under ``[project]`` (pyproject-fmt's layout: litgpt's); else, when the
    document has no such table, before the header that follows the table above it (``[project]``), or at the end.
    None: a layout this does not address (an inline table, keys quoted or spelled otherwise)."""
    own = [span for path, span in spans.items() if path[:-1] == table and len(path) == len(table) + 1]
    header = re.compile(rf"^\[\s*{re.escape('.'.join(table))}\s*\]", re.MULTILINE)
    if own:
        last = max(own, key=lambda span: span.end)
        end = text.find("\n", last.end)
        after_last = len(text) if end < 0 else end + 1
        dotted = f"{table[-1]}."
        if len(table) > 1 and all(text[span.statement_start :].startswith(dotted) for span in own):
            return after_last, False, dotted  # (`optional-dependencies.gpu = [...]` under [project])
        if not header.search(text) or any(not re.match(r"[\w\"'-]", text[span.statement_start]) for span in own):
            return None
        if any(text[span.statement_start :].lstrip().startswith(table[-1]) for span in own):
            return None  # (dotted keys mixed with others)
        return after_last, False, ""
    if header.search(text):
        return None  # (a table without lists, or lists the scanner did not address)
    parent = re.compile(rf"^\[\s*{re.escape('.'.join(table[:-1]))}\s*\]", re.MULTILINE) if len(table) > 1 else None
    start = parent.search(text) if parent else None
    if start is None:
        return len(text), True, ""
    following = re.compile(r"^\[", re.MULTILINE).search(text, start.end())
    return (following.start() if following else len(text)), True, ""


def _verify(
    new_text: str,
    data: dict[str, Any],
    changes: dict[tuple[str, ...], Change],
    poetry: Expected,
    added: NewList | None = None,
) -> None:
    """The edited document must hold exactly the intended values."""
    import copy

    expected = copy.deepcopy(data)
    for path, change in changes.items():
        parent = _get(expected, path[:-1])
        parent[path[-1]] = change.apply(parent[path[-1]])
    if added is not None:
        table: Any = expected
        for key in added.table:
            table = table.setdefault(key, {})
        table[NPU_EXTRA] = list(added.values)
    poetry.apply(expected)
    try:
        actual = _parse(new_text)
    except PortError:
        actual = None
    if actual != expected:
        raise PortError(
            "internal error: the edited pyproject.toml would not hold the intended values; the file is left unchanged"
        )


class PyprojectHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        source = decode_text(data)
        port = port_pyproject(source.text, selection)
        return Ported(source, port.result(), port.findings)


# --- the project step: the install commands of a project that gets an npu extra -------------------------------------

# An extra for CUDA hosts, by its name (`gpu`, `cuda`, `cu121`, `cuda12`, `nvidia`).
_CUDA_EXTRA = re.compile(r"(?i)^(?:gpu|cuda|nvidia|cu\d+|cuda\d+)(?:[-_.]?(?:cu\d+|cuda\d*))?$")


class NpuExtra(ProjectStep):
    """Which extras of the project's pyproject.toml its install commands must stop naming for the ``npu`` one the
    port adds, or that it has (PortOptions.cuda_extras, read by rules/project/installs.py): those for CUDA hosts, by
    their name or by the CUDA wheel index ``[tool.uv.sources]`` binds them to. (The commands' edits are NPU602's
    too: a run that leaves it out changes neither the file nor the commands.)"""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        if options.cuda_extras:
            return options
        path = project.top / "pyproject.toml"
        try:
            text = path.read_text("utf-8")
            data = _parse(text)
            spans = array_spans(text)
        except (OSError, UnicodeDecodeError, PortError, TomlScanError):
            return options
        if not isinstance(data.get("project"), dict):
            return options  # (extras are installed as `.[name]` only from a project)
        extras = _table_at(data, ("project", "optional-dependencies"))
        planned = _planned_extra(text, data, spans)
        added = planned is not None and bool(planned[3].new_requirement) and planned[4] is not None
        if NPU_EXTRA not in extras and not added:
            return options  # (no npu extra to install: the commands stay)
        cuda = {name for name in extras if _CUDA_EXTRA.match(name)} | _cuda_index_extras(data)
        cuda.discard(NPU_EXTRA)
        return replace(options, cuda_extras=tuple(sorted(cuda))) if cuda else options


def _cuda_index_extras(data: dict[str, Any]) -> set[str]:
    """The extras ``[tool.uv.sources]`` installs from a CUDA wheel index (``{ index = "pytorch-cu124", extra = "gpu"
    }`` with that index's URL on download.pytorch.org/whl/cu124)."""
    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict):
        return set()
    indexes = {i.get("name"): str(i.get("url", "")) for i in uv.get("index", []) if isinstance(i, dict)}
    found: set[str] = set()
    for entries in (uv.get("sources") or {}).values():
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, dict) and isinstance(entry.get("extra"), str):
                url = indexes.get(entry.get("index"), "")
                if CUDA_INDEX.search(url) or _CUDA_EXTRA.match(str(entry.get("index", ""))):
                    found.add(entry["extra"])
    return found


# The lock files a pyproject.toml's tools keep, with the command that writes them again.
LOCK_FILES = {"uv.lock": "uv lock", "poetry.lock": "poetry lock", "pdm.lock": "pdm lock"}


class StaleLocks(ProjectStep):
    """A pyproject.toml the port changes leaves its lock files stale (uv, Poetry and PDM refuse, or install what
    the file no longer says): a note names each, with the command that refreshes it."""

    def after(self, files: list[FileResult], options: PortOptions) -> Sequence[str]:
        notes = []
        for file in files:
            path = Path(file.path)
            if path.name != "pyproject.toml" or not file.changed:
                continue
            for lock, command in LOCK_FILES.items():
                if (path.parent / lock).is_file():
                    where = (path.parent / lock).as_posix()
                    notes.append(
                        f"{where} will not match the ported pyproject.toml: run `{command}` there after the port"
                    )
        return notes


PROJECT_STEPS = (NpuExtra(), StaleLocks())
