"""Makefiles: recipe lines are shell code (with make's ``$(VAR)`` and ``$$``), variable assignments may export
CUDA variables or run ``$(shell ...)``. TODO comments are make comments at column 0, which make ignores even
between the lines of a recipe. ``define`` blocks and make comments are never touched."""

from __future__ import annotations

import re

from ascend_port.core.options import DEFAULT, PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.sources import line_offsets
from ascend_port.formats.textedit import TextPort
from ascend_port.rules.project.shell import ShellContext, port_shell_code, rename_site

_ASSIGNMENT = re.compile(
    r"^(?P<lead>(?:(?:export|override|private)\s+)*)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?::::=|::=|:=|\?=|\+=|!=|=)"
)
_EXPORT = re.compile(r"^(?:export|unexport)\s+(?P<names>[A-Za-z_][A-Za-z0-9_ \t]*)$")


def port_makefile(text: str, selection: Selection, options: PortOptions = DEFAULT) -> TextPort:
    port = TextPort(text, selection, options)
    lines = text.splitlines(keepends=True)
    offsets = line_offsets(lines)
    in_define = False
    i = 0
    while i < len(lines):
        first = i
        while i + 1 < len(lines) and lines[i].rstrip("\r\n").endswith("\\"):
            i += 1
        start, end = offsets[first], offsets[i] + len(lines[i].rstrip("\r\n"))
        logical = text[start:end]
        i += 1
        stripped = logical.strip()
        if in_define:
            in_define = not re.match(r"^endef\b", stripped)
            continue
        if re.match(r"^(?:(?:export|override)\s+)?define\b", stripped):
            in_define = True
            continue
        ctx = ShellContext(base=0, todo_above=start, todo_indent="", make=True)
        if logical.startswith("\t"):
            ctx.base = start + 1
            port_shell_code(port, logical[1:], ctx)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if m := _EXPORT.match(logical):
            for name in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", m.group("names")):
                _make_name(port, start + m.start("names") + name.start(), name.group(0), start)
            continue
        if m := _ASSIGNMENT.match(logical):
            _make_name(port, start + m.start("name"), m.group("name"), start)
            ctx.base = start + m.end()
            port_shell_code(port, logical[m.end() :], ctx)
    return port


def _make_name(port: TextPort, offset: int, name: str, line_start: int) -> None:
    """A make variable named like a CUDA variable is (or becomes) the environment variable: rename it; its
    ``$(NAME)`` references are renamed where the recipes use them."""
    rename_site(port, offset, name, lambda rule, at, message: port.todo(rule, at, message, above=line_start, indent=""))


class MakefileHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions):
        from ascend_port.core.porting import Ported
        from ascend_port.core.sources import decode_text

        source = decode_text(data)
        port = port_makefile(source.text, selection, options)
        return Ported(source, port.result(), port.findings)
