"""pyproject.toml: ``[project]`` dependencies and optional dependencies, ``[dependency-groups]`` (PEP 735), and
Poetry's dependency tables (``poetry.py``).

tomlkit reads the document (and rejects invalid TOML with its reason); the edits replace the bytes of the items
they change; the result is read again with tomlkit and must hold exactly the intended values, every other value
unchanged. ``[build-system] requires`` is not touched: it is what builds the package, not what runs it.
"""

from __future__ import annotations

from typing import Any

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_text
from ascend_port.formats.textedit import TextPort
from ascend_port.formats.tomlspans import TomlScanError, array_spans
from ascend_port.rules.project.poetry import Expected, PoetryPort
from ascend_port.rules.project.reqlist import Change, ListItem, RequirementList, edit_list


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
        change = edit_list(
            port,
            RequirementList(
                ".".join(path[1:]) if path[0] == "project" else ".".join(path), items, span.statement_start
            ),
        )
        if change is not None:
            changes[path] = change
    poetry = PoetryPort(port, data).run()  # [tool.poetry.*dependencies] tables: the same decisions
    new_text = port.result()
    if new_text is not None:
        _verify(new_text, data, changes, poetry)
    return port


def _verify(new_text: str, data: dict[str, Any], changes: dict[tuple[str, ...], Change], poetry: Expected) -> None:
    """The edited document must hold exactly the intended values."""
    import copy

    expected = copy.deepcopy(data)
    for path, change in changes.items():
        parent = _get(expected, path[:-1])
        parent[path[-1]] = change.apply(parent[path[-1]])
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
