"""Poetry's dependency tables in pyproject.toml (``[tool.poetry.dependencies]``, ``[tool.poetry.group.<g>.dependencies]``,
``[tool.poetry.dev-dependencies]``) and its package sources: NPU600-NPU603 as in requirements files.

Each dependency is a ``name = value`` line; only lines whose value is complete on the line are edited (a CUDA-only
package commented out, torch-npu added on the line after torch, triton renamed). A CUDA-only package that an
extra (``[tool.poetry.extras]``) names is reported instead: removing it would break the extra. ``port_pyproject``
reads the edited file again and compares it with ``Expected.apply`` of the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ascend_port.core.cuda_packages import removal_reason
from ascend_port.formats.requirement import canonical
from ascend_port.formats.textedit import Edit, TextPort, newline_of
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    NPU_EXTRA,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    torch_npu_specifier,
)
from ascend_port.rules.project.requirements_txt import CPU_BUILD, CUDA_INDEX, CUDA_LOCAL, CUDA_TORCH_BUILD

_HEADER = re.compile(r"^[ \t]*\[(?!\[)(?P<name>[^\]]+)\][ \t]*(?:#.*)?$")
_ARRAY_HEADER = re.compile(r"^[ \t]*\[\[(?P<name>[^\]]+)\]\][ \t]*(?:#.*)?$")
_KEY_LINE = re.compile(r"^(?P<lead>[ \t]*)(?P<q>[\"']?)(?P<key>[A-Za-z0-9_-]+)(?P=q)[ \t]*=[ \t]*(?P<value>.*)$")
_DEPENDENCY_TABLE = re.compile(r"^tool\.poetry\.(?:dependencies|dev-dependencies|group\.[\w-]+\.dependencies)$")
_CORE = ("tool", "poetry", "dependencies")
_VERSION = re.compile(r"^(?:==)?\s*v?(\d+(?:\.\d+)*(?:\.\*)?(?:\+[\w.]+)?)$")


@dataclass
class Expected:
    """What the edits do to the parsed document: tables' keys removed, renamed or added after another."""

    removed: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    added: list[tuple[tuple[str, ...], str, str, Any]] = field(default_factory=list)  # (table, after, key, value)
    renamed: list[tuple[tuple[str, ...], str, str, Any]] = field(default_factory=list)  # (table, old, new, value)
    groups: dict[str, Any] = field(default_factory=dict)  # new [tool.poetry.group.<name>] tables

    def apply(self, data: dict) -> None:
        for name, group in self.groups.items():
            data["tool"]["poetry"].setdefault("group", {})[name] = group
        for table, key in self.removed:
            del _table(data, table)[key]
        for table, old, new, value in self.renamed:
            items = list(_table(data, table).items())
            _replace(_table(data, table), [(new, value) if k == old else (k, v) for k, v in items])
        for table, after, key, value in self.added:
            items = list(_table(data, table).items())
            index = [k for k, _ in items].index(after) + 1
            _replace(_table(data, table), [*items[:index], (key, value), *items[index:]])


def _table(data: dict, path: tuple[str, ...]) -> dict:
    for key in path:
        data = data[key]
    return data


def _replace(table: dict, items: list[tuple[str, Any]]) -> None:
    table.clear()
    table.update(items)


def _parse_value(text: str) -> tuple[bool, Any]:
    """(True, value) when ``text`` (a value with an optional trailing comment) is a whole TOML value."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return True, tomlkit.parse(f"x = {text}\n").unwrap()["x"]
    except TOMLKitError:
        return False, None


def _poetry_pin(value: Any) -> str:
    """The PEP 440 specifier of a Poetry constraint that pins one version (``"2.1.0"``, ``"==2.1.0"``), else ''."""
    version = value.get("version") if isinstance(value, dict) else value
    if not isinstance(version, str):
        return ""
    m = _VERSION.match(version.strip())
    return f"=={m.group(1)}" if m else ""


class PoetryPort:
    def __init__(self, port: TextPort, data: dict) -> None:
        self.port, self.data = port, data
        self.text = port.text
        self.newline = newline_of(self.text)
        self.expected = Expected()
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        self.poetry = poetry if isinstance(poetry, dict) else {}
        extras = self.poetry.get("extras")
        self.in_extras = {
            canonical(name)
            for names in (extras.values() if isinstance(extras, dict) else [])
            if isinstance(names, list)
            for name in names
            if isinstance(name, str)
        }
        self.cuda_sources = {
            s.get("name")
            for s in self.poetry.get("source", [])
            if isinstance(s, dict) and isinstance(s.get("url"), str) and CUDA_INDEX.search(s["url"])
        }

    @property
    def package(self) -> bool:
        """A package (Poetry's default), not an application (``package-mode = false``)."""
        return self.poetry.get("package-mode", True) is not False

    def ports(self, table: tuple[str, ...]) -> bool:
        """Are the dependencies of ``table`` ported: the core ones, or the npu group's (another group is for the
        hosts that choose it: it keeps what it installs)."""
        return table == _CORE or table == ("tool", "poetry", "group", NPU_EXTRA, "dependencies")

    def run(self) -> Expected:
        if not self.poetry:
            return self.expected
        table: str | None = None
        offset = 0
        for line in self.text.splitlines(keepends=True):
            content = line.rstrip("\r\n")
            if m := (_HEADER.match(content) or _ARRAY_HEADER.match(content)):
                table = re.sub(r"\s+", "", m.group("name"))
                if m.re is _ARRAY_HEADER:
                    table = "[" + table
            elif table == "[tool.poetry.source" and (k := _KEY_LINE.match(content)) and k.group("key") == "url":
                ok, url = _parse_value(k.group("value"))
                if ok and isinstance(url, str) and CUDA_INDEX.search(url):
                    self.port.todo(CUDA_TORCH_BUILD, offset, f"CUDA wheel index as a Poetry source: {CPU_BUILD}")
            elif table and _DEPENDENCY_TABLE.match(table) and (k := _KEY_LINE.match(content)):
                self.dependency(tuple(table.split(".")), k, offset, offset + len(content))
            offset += len(line)
        return self.expected

    def dependency(self, table: tuple[str, ...], m: re.Match, start: int, end: int) -> None:
        key = m.group("key")
        values = _table(self.data, table)
        if key not in values:
            return
        whole, _ = _parse_value(m.group("value"))
        value = values[key]
        name = canonical(key)
        if name in ("torch", "torchvision", "torchaudio"):
            self.torch_build(key, value, start)
        if not self.ports(table):
            return
        reason = removal_reason(name)
        if reason is not None:
            self.remove(table, key, reason, start, end, whole)
        elif name == "triton":
            self.triton(table, key, value, m, start, end, whole)
        elif name == "torch" and table == _CORE and self.package:
            self.add_npu_group(value, end - len(m.group(0)))
        elif name == "torch":
            self.add_torch_npu(table, key, value, m, end, whole)

    def torch_build(self, key: str, value: Any, start: int) -> None:
        version = value.get("version") if isinstance(value, dict) else value
        source = value.get("source") if isinstance(value, dict) else None
        if isinstance(version, str) and CUDA_LOCAL.search(version):
            self.port.todo(CUDA_TORCH_BUILD, start, f"{key} {version} is a CUDA build: {CPU_BUILD}")
        elif source in self.cuda_sources:
            self.port.todo(CUDA_TORCH_BUILD, start, f"{key} comes from the CUDA source {source!r}: {CPU_BUILD}")

    def remove(self, table: tuple[str, ...], key: str, reason: str, start: int, end: int, whole: bool) -> None:
        if canonical(key) in self.in_extras or not whole:
            why = "an extra in [tool.poetry.extras] names it" if whole else "its value spans lines"
            self.port.report(CUDA_ONLY_DEPENDENCY, start, f"{key}: {reason}; {why}: remove it by hand")
            return
        lead = len(self.text[start:end]) - len(self.text[start:end].lstrip(" \t"))
        body = self.text[start + lead : end]
        note = f"removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {reason}"
        edit = Edit(start + lead, end, f"# {body}  # {note}")
        if self.port.fix(CUDA_ONLY_DEPENDENCY, start, [edit], f"{key} removed from {'.'.join(table)}: {reason}"):
            self.expected.removed.append((table, key))

    def triton(self, table, key: str, value: Any, m: re.Match, start: int, end: int, whole: bool) -> None:
        if not whole or not isinstance(value, str) or "triton" in self.in_extras:
            self.port.report(TRITON_ASCEND_DEPENDENCY, start, "replace triton with triton-ascend by hand")
            return
        reason = f"was {key} {value}; pin the triton-ascend release for your CANN (uninstall community triton first)"
        line = f'{m.group("lead")}triton-ascend = "*"  # ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {reason}'
        if self.port.fix(
            TRITON_ASCEND_DEPENDENCY, start, [Edit(start, end, line)], f"triton -> triton-ascend ({reason})"
        ):
            self.expected.renamed.append((table, key, "triton-ascend", "*"))

    def add_npu_group(self, torch: Any, start: int) -> None:
        """torch-npu in an optional group of its own, ``npu`` (``poetry install --with npu``), never in a package's
        core dependencies: every user of the package would get it, and without Ascend's CANN its autoload makes
        ``import torch`` fail."""
        group = self.poetry.get("group")
        if isinstance(group, dict) and NPU_EXTRA in group:
            return  # (the project has one: its dependencies are ported as a table)
        spec, why = torch_npu_specifier(_poetry_pin(torch))
        if spec is None:
            self.port.report(TORCH_NPU_DEPENDENCY, start, why)
            return
        version = spec[2:] if spec else "*"
        nl = self.newline
        text = (
            f"{nl}[tool.poetry.group.{NPU_EXTRA}]{nl}optional = true{nl}{nl}"
            f'[tool.poetry.group.{NPU_EXTRA}.dependencies]{nl}torch-npu = "{version}"{nl}'
        )
        if not self.text.endswith(("\n", "\r")):
            text = nl + text
        message = (
            f"torch-npu added as an optional group of its own, `{NPU_EXTRA}` ({why}): install it with `poetry install "
            f"--with {NPU_EXTRA}`; the core dependencies install on every host as before"
        )
        end = len(self.text)
        if self.port.fix(TORCH_NPU_DEPENDENCY, start, [Edit(end, end, text)], message):
            self.expected.groups[NPU_EXTRA] = {"optional": True, "dependencies": {"torch-npu": version}}

    def add_torch_npu(self, table, key: str, value: Any, m: re.Match, end: int, whole: bool) -> None:
        values = _table(self.data, table)
        if any(canonical(k) == "torch-npu" for k in values) or not whole:
            return
        pin = _poetry_pin(value)
        spec, why = torch_npu_specifier(pin)
        start = end - len(m.group(0))
        if spec is None:
            self.port.report(TORCH_NPU_DEPENDENCY, start, why)
            return
        version = spec[2:] if spec else "*"
        line = f'{m.group("lead")}torch-npu = "{version}"  # added by ascend-port {TORCH_NPU_DEPENDENCY.id}: {why}'
        if self.port.fix(
            TORCH_NPU_DEPENDENCY, start, [Edit(end, end, self.newline + line)], f"torch-npu added ({why})"
        ):
            self.expected.added.append((table, key, "torch-npu", version))
