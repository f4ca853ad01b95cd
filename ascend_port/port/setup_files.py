"""setup.py and setup.cfg: ``install_requires`` and ``extras_require`` like every other dependency list.

setup.py is still Python: the requirement lists are edited first (LibCST finds them: literal lists passed to
``setup(...)``, directly or through a module-level name), then the result goes through the Python port like any
module (``CUDAExtension`` is the kernels rules' business there). setup.cfg is read with configparser, edited line by
line, and read again to check that setuptools will see exactly the intended lists.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_python, decode_text, line_offsets, python_syntax_error
from ascend_port.formats.requirement import Requirement, parse_requirement
from ascend_port.formats.textedit import Edit, LineIndex, TextPort, newline_of
from ascend_port.rules.project.reqlist import Change, ListItem, RequirementList, edit_list
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    NPU_EXTRA,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    torch_npu_verdict,
    verdict,
)

_REQUIREMENT_KEYWORDS = ("install_requires", "extras_require")

# --- setup.py -------------------------------------------------------------------------------------------------------


@dataclass
class _Found:
    where: str
    node: cst.List | cst.Tuple
    statement: cst.CSTNode
    # the list's part in setup(): "install_requires", or the extra's name ("" where its key is not a string)
    part: str = "install_requires"


class _SetupLists(cst.CSTVisitor):
    """The list literals that reach ``setup(install_requires=..., extras_require=...)``."""

    def __init__(self, module: cst.Module) -> None:
        self.assignments: dict[str, tuple[cst.BaseExpression, cst.CSTNode]] = {}
        for statement in module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        for target in targets:
                            if isinstance(target, cst.Name):
                                self.assignments[target.value] = (small.value, statement)
        self.found: list[_Found] = []
        self._statement: list[cst.CSTNode] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement.append(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = (
            func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        )
        if name != "setup" or not self._statement:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _REQUIREMENT_KEYWORDS:
                part = "install_requires" if arg.keyword.value == "install_requires" else ""
                self._collect(arg.value, arg.keyword.value, self._statement[-1], 0, part)

    def _collect(self, expr: cst.BaseExpression, where: str, statement: cst.CSTNode, depth: int, part: str) -> None:
        if depth > 3:
            return
        if isinstance(expr, (cst.List, cst.Tuple)):
            self.found.append(_Found(where, expr, statement, part))
        elif isinstance(expr, cst.Name) and expr.value in self.assignments:
            value, assigned_in = self.assignments[expr.value]
            self._collect(value, expr.value, assigned_in, depth + 1, part)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            self._collect(expr.left, where, statement, depth + 1, part)
            self._collect(expr.right, where, statement, depth + 1, part)
        elif isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    key = element.key.evaluated_value if isinstance(element.key, cst.SimpleString) else "?"
                    extra = key if isinstance(key, str) and key != "?" else ""
                    self._collect(element.value, f"{where}[{key!r}]", statement, depth + 1, extra)


def _list_values(node: cst.List | cst.Tuple) -> list[str | None]:
    return [
        e.value.evaluated_value
        if isinstance(e.value, cst.SimpleString) and isinstance(e.value.evaluated_value, str)
        else None
        for e in node.elements
    ]


def _find_lists(
    text: str,
) -> list[tuple[str, cst.List | cst.Tuple, cst.CSTNode, Mapping[cst.CSTNode, CodeRange], str]]:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        python = python_syntax_error(text)
        raise PortError(f"cannot parse: {python or f'{error.message} (line {error.raw_line})'}") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    visitor = _SetupLists(module)
    module.visit(visitor)
    return [(f.where, f.node, f.statement, positions, f.part) for f in visitor.found]


def port_setup_requirements(text: str, selection: Selection) -> TextPort:
    port = TextPort(text, selection)
    if not re.search(r"install_requires|extras_require", text):
        return port
    lines = LineIndex(text)
    expected: list[tuple[list[str], Change | None]] = []
    seen: set[int] = set()
    for where, node, statement, positions, part in _find_lists(text):
        if id(node) in seen:
            continue
        seen.add(id(node))
        values = _list_values(node)
        items = []
        for element, value in zip(node.elements, values):
            if value is None:
                continue
            where_element = positions[element.value]
            start = lines.starts[where_element.start.line - 1] + where_element.start.column
            end = lines.starts[where_element.end.line - 1] + where_element.end.column
            items.append(ListItem(start, end, value))
        statement_line = positions[statement].start.line
        core, npu = part == "install_requires", part == NPU_EXTRA
        req_list = RequirementList(where, tuple(items), lines.starts[statement_line - 1])
        change = edit_list(port, req_list, add_torch_npu=npu, port_items=core or npu)
        if core:
            _npu_extra_by_hand(port, items, 'extras_require={"npu": ["%s"]} to setup()')
        expected.append(([v for v in values if v is not None], change))
    new_text = port.result()
    if new_text is not None:
        actual = [[v for v in _list_values(node) if v is not None] for _, node, _, _, _ in _find_lists(new_text)]
        wanted = [change.apply(values) if change else values for values, change in expected]
        if actual != wanted:
            raise PortError(
                "internal error: the edited setup.py would not hold the intended requirement lists; "
                "the file is left unchanged"
            )
    return port


def _npu_extra_by_hand(port: TextPort, items: list[ListItem] | tuple[ListItem, ...], how: str) -> None:
    """torch-npu is not added to the core requirements of a package (every user would install it, and without
    Ascend's CANN its autoload makes ``import torch`` fail): where they name torch, a finding says which extra to
    add (``how``, with the requirement in it), once."""
    requirements = [parse_requirement(item.value) for item in items]
    found = [r for r in requirements if r is not None]
    placed = torch_npu_verdict(found) if port.enabled(TORCH_NPU_DEPENDENCY) else None
    if placed is None or not placed[1].new_requirement:
        return
    index = requirements.index(found[placed[0]])
    wanted = placed[1].new_requirement + found[placed[0]].marker
    port.report(
        TORCH_NPU_DEPENDENCY,
        items[index].start,
        "torch-npu goes in an extra of its own, not in the core requirements every user of the package installs "
        "(without Ascend's CANN, its autoload breaks `import torch`): add " + how % wanted + " and install "
        f"it with `pip install .[{NPU_EXTRA}]`",
    )


class SetupPyHandler:
    """The requirement lists, then the Python port of the result (findings keep the original line numbers)."""

    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        from ascend_port.port.python import port_source

        source = decode_python(data)
        requirements = port_setup_requirements(source.text, selection)
        text = requirements.result() or source.text
        python = port_source(text, selection, options)
        added = _added_lines(source.text, requirements.edits)
        findings = list(requirements.findings)
        findings += [replace(f, line=_original_line(f.line, added)) for f in python.findings]
        new_text = python.new_text if python.new_text is not None else requirements.result()
        return Ported(source, new_text, sorted(findings, key=lambda f: (f.line, f.rule.id)))


def _added_lines(text: str, edits: list[Edit]) -> list[int]:
    """For each line the requirement edits added, the line number it has in the edited text."""
    lines = LineIndex(text)
    added: list[int] = []
    shift = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        count = edit.new.count("\n") - text.count("\n", edit.start, edit.end)
        if count > 0:
            first_new = lines.line_of(edit.start) + shift + (1 if edit.start > lines.line_start(edit.start) else 0)
            added.extend(range(first_new, first_new + count))
            shift += count
    return added


def _original_line(line: int, added: list[int]) -> int:
    return line - sum(1 for a in added if a < line)


# --- setup.cfg --------------------------------------------------------------------------------------------------------

_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]\s*$")
_OPTION = re.compile(r"^(?P<key>[A-Za-z0-9_.-]+)\s*[=:]\s*(?P<value>.*)$")


@dataclass
class _CfgValue:
    section: str
    key: str
    key_line: int  # 0-based index of the ``key = ...`` line
    lines: list[int]  # 0-based indexes of the lines holding one requirement each (first line included if it has one)


def _cfg_values(lines: list[str]) -> list[_CfgValue]:
    values: list[_CfgValue] = []
    section = ""
    current: _CfgValue | None = None
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        if current is not None and line[:1] in (" ", "\t") and line.strip():
            if not line.strip().startswith(("#", ";")):
                current.lines.append(i)
            continue
        if current is not None and not line.strip():
            continue  # configparser keeps blank lines inside a value; setuptools drops them
        current = None
        m = _SECTION.match(line)
        if m:
            section = m.group("name").strip()
            continue
        m = _OPTION.match(line)
        if not m:
            continue
        key = m.group("key").replace("-", "_")
        wanted = (section == "options" and key == "install_requires") or section == "options.extras_require"
        if wanted:
            current = _CfgValue(section, m.group("key"), i, [i] if m.group("value").strip() else [])
            values.append(current)
    return values


def _read_cfg(text: str) -> dict[tuple[str, str], list[str]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise PortError(f"invalid setup.cfg: {error}") from None
    out: dict[tuple[str, str], list[str]] = {}
    for section in ("options", "options.extras_require"):
        if not parser.has_section(section):
            continue
        for key, value in parser.items(section, raw=True):
            if section == "options" and key.replace("-", "_") != "install_requires":
                continue
            # As setuptools reads it: one requirement per line, comments and blanks dropped.
            items = value.splitlines() if "\n" in value else [value]
            out[(section, key)] = [s.strip() for s in items if s.strip() and not s.strip().startswith("#")]
    return out


def port_setup_cfg(text: str, selection: Selection) -> TextPort:
    port = TextPort(text, selection)
    if not re.search(r"install_requires|install-requires|extras_require", text):
        return port
    before = _read_cfg(text)
    lines = text.splitlines(keepends=True)
    offsets = line_offsets(lines)
    newline = newline_of(text)
    expected = {k: list(v) for k, v in before.items()}
    for value in _cfg_values(lines):
        key = (value.section, value.key.lower())
        entries = []
        for i in value.lines:
            line = lines[i].rstrip("\r\n")
            body = (
                line.split("=", 1)[1]
                if i == value.key_line and "=" in line
                else line.split(":", 1)[1]
                if i == value.key_line
                else line
            )
            lead = len(line) - len(body)
            req_text = body.strip()
            entries.append((i, offsets[i] + lead + (len(body) - len(body.lstrip())), req_text))
        if any(";" in e[2] and value.lines == [value.key_line] for e in entries):
            continue  # a one-line value is split on ";" by setuptools: several requirements, left as they are
        _edit_cfg_value(port, value, entries, lines, offsets, newline, expected.get(key))
    new_text = port.result()
    if new_text is not None and _read_cfg(new_text) != expected:
        raise PortError(
            "internal error: the edited setup.cfg would not hold the intended requirement lists; "
            "the file is left unchanged"
        )
    return port


def _edit_cfg_value(port, value, entries, lines, offsets, newline, expected: list[str] | None) -> None:
    """setup.cfg values have no inline comments (setuptools would read them as part of the requirement), so every
    note goes on a comment line of its own."""
    core = value.section == "options"
    npu = value.section == "options.extras_require" and value.key.lower() == NPU_EXTRA
    if not (core or npu):
        return  # another extra: for the hosts that choose it, as it is
    requirements = []
    for entry in entries:
        requirements.append(_edit_cfg_requirement(port, value, entry, lines, offsets, newline, expected))
    if npu:
        _add_cfg_torch_npu(port, value, entries, requirements, lines, offsets, newline, expected)
    else:
        items = [ListItem(start, start + len(text), text) for _, start, text in entries]
        _npu_extra_by_hand(port, items, "an [options.extras_require] key `npu = %s`")


def _edit_cfg_requirement(
    port: TextPort,
    value: _CfgValue,
    entry: tuple[int, int, str],
    lines: list[str],
    offsets: list[int],
    newline: str,
    expected: list[str] | None,
) -> Requirement | None:
    """Comment out a CUDA-only requirement or rename triton (keeping ``expected`` in step); the parsed requirement."""
    i, start, req_text = entry
    req = parse_requirement(req_text)
    if req is None:
        return None
    found = verdict(req)
    if found is None:
        return req
    on_key_line = i == value.key_line
    if found.rule is CUDA_ONLY_DEPENDENCY:
        note = f"# removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {found.reason}"
        if on_key_line:
            cut = _blanks_before(lines, offsets, i, start)  # no trailing blanks after the emptied `key =`
            edits = [
                Edit(cut, start + len(req_text), ""),
                Edit(offsets[i], offsets[i], f"# {req_text}  {note}{newline}"),
            ]
        else:
            edits = [Edit(start, start, "# "), Edit(start + len(req_text), start + len(req_text), f"  {note}")]
        if (
            port.fix(found.rule, start, edits, f"{req.name} removed from {value.key}: {found.reason}")
            and expected is not None
        ):
            expected.remove(req_text)
    elif found.rule is TRITON_ASCEND_DEPENDENCY:
        new_req = found.new_requirement + req.marker
        pad = "" if on_key_line else lines[i][: len(lines[i]) - len(lines[i].lstrip(" \t"))]
        edits = [
            Edit(start + req.name_start, start + req.spec_end, found.new_requirement),
            Edit(offsets[i], offsets[i], f"{pad}# ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {found.reason}{newline}"),
        ]
        if port.fix(found.rule, start, edits, f"triton -> triton-ascend in {value.key}") and expected is not None:
            expected[expected.index(req_text)] = new_req
    return req


def _add_cfg_torch_npu(
    port: TextPort,
    value: _CfgValue,
    entries: list[tuple[int, int, str]],
    requirements: list[Requirement | None],
    lines: list[str],
    offsets: list[int],
    newline: str,
    expected: list[str] | None,
) -> None:
    """NPU602: torch-npu on a line after torch's, with the indent of the value's other lines (four spaces if none)."""
    key_indent = "    "
    continuation = [i for i in value.lines if i != value.key_line]
    if continuation:
        first = lines[continuation[0]]
        key_indent = first[: len(first) - len(first.lstrip(" \t"))]
    parsed = [r for r in requirements if r is not None]
    placed = torch_npu_verdict(parsed) if port.enabled(TORCH_NPU_DEPENDENCY) else None
    if placed is None:
        return
    torch = parsed[placed[0]]
    index = requirements.index(torch)
    i, start, req_text = entries[index]
    found = placed[1]
    if not found.new_requirement:
        port.report(TORCH_NPU_DEPENDENCY, start, found.reason)
        return
    new_req = found.new_requirement + torch.marker
    end = offsets[i] + len(lines[i].rstrip("\r\n"))
    if i == value.key_line:
        # A one-line value becomes a list, one requirement per line (no blanks left after `key =`).
        cut = _blanks_before(lines, offsets, i, start)
        edit = Edit(cut, end, f"{newline}{key_indent}{req_text}{newline}{key_indent}{new_req}")
    else:
        edit = Edit(end, end, f"{newline}{key_indent}{new_req}")
    if (
        port.fix(TORCH_NPU_DEPENDENCY, start, [edit], f"{new_req} added to {value.key} ({found.reason})")
        and expected is not None
    ):
        expected.insert(expected.index(req_text) + 1, new_req)


def _blanks_before(lines: list[str], offsets: list[int], i: int, start: int) -> int:
    """The offset where the spaces and tabs just before ``start`` (on line ``i``) begin."""
    cut = start
    while cut > offsets[i] and lines[i][cut - offsets[i] - 1] in " \t":
        cut -= 1
    return cut


class SetupCfgHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        source = decode_text(data)
        port = port_setup_cfg(source.text, selection)
        return Ported(source, port.result(), port.findings)
