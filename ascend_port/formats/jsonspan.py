"""JSON with offsets: where every value of a document is in its text, so an edit can replace the bytes of one
string and keep the rest of the file (indentation, key order, escapes) exactly. Only for text ``json.loads``
has already accepted."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = re.compile(r"-?\d[\d.eE+-]*|true|false|null")
_BLANK = re.compile(r"[ \t\r\n]*")


@dataclass
class JNode:
    kind: str  # object | array | string | scalar
    start: int
    end: int
    members: list[tuple[JNode, JNode]] = field(default_factory=list)  # object: (key, value)
    items: list[JNode] = field(default_factory=list)  # array
    raw: str = ""  # string and scalar: the token

    @property
    def value(self) -> Any:
        """The decoded value of a string or scalar token."""
        return json.loads(self.raw)

    def get(self, key: str) -> JNode | None:
        for k, v in self.members:
            if k.value == key:
                return v
        return None

    def member(self, key: str) -> JNode:
        """The value of ``key``, which the caller knows is there (KeyError otherwise)."""
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0

    def blank(self) -> None:
        blank = _BLANK.match(self.t, self.i)
        assert blank is not None  # (it matches the empty string)
        self.i = blank.end()

    def value(self) -> JNode:
        self.blank()
        c = self.t[self.i]
        if c == "{":
            return self.container("object", "}")
        if c == "[":
            return self.container("array", "]")
        m = (_STRING if c == '"' else _SCALAR).match(self.t, self.i)
        if not m:
            raise ValueError(f"unexpected character at offset {self.i}")
        self.i = m.end()
        return JNode("string" if c == '"' else "scalar", m.start(), m.end(), raw=m.group(0))

    def container(self, kind: str, close: str) -> JNode:
        node = JNode(kind, self.i, self.i)
        self.i += 1
        self.blank()
        if self.t[self.i] == close:
            self.i += 1
            node.end = self.i
            return node
        while True:
            if kind == "object":
                key = self.value()
                self.blank()
                self.i += 1  # ':'
                node.members.append((key, self.value()))
            else:
                node.items.append(self.value())
            self.blank()
            c = self.t[self.i]
            self.i += 1
            if c == close:
                node.end = self.i
                return node


def parse(text: str) -> JNode:
    """The document's tree of spans. ``text`` must be valid JSON (check with ``json.loads`` first)."""
    return _Parser(text).value()


def dumps_like(value: str, ensure_ascii: bool) -> str:
    """A JSON string token as json.dumps (and nbformat) write it."""
    return json.dumps(value, ensure_ascii=ensure_ascii)
