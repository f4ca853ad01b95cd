"""Where the arrays of a TOML document are in its text. tomlkit reads the values but not their offsets; this scanner
finds the offsets of every array's string items, by key path, so edits can replace bytes instead of re-rendering.
The caller checks the edited text with tomlkit, so a scanner mistake can never write a wrong file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^,\]\}\r\n#]*")


class TomlScanError(ValueError):
    pass


@dataclass
class ArraySpan:
    start: int
    end: int
    strings: list[tuple[int, int]] = field(default_factory=list)  # spans of string items (quotes included)
    statement_start: int = 0  # line start of the key/value statement holding the array


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0
        self.n = len(text)
        self.arrays: dict[tuple[str, ...], ArraySpan] = {}

    def fail(self, what: str) -> TomlScanError:
        line = self.t.count("\n", 0, self.i) + 1
        return TomlScanError(f"line {line}: {what}")

    def blanks(self) -> None:
        while self.i < self.n and self.t[self.i] in " \t":
            self.i += 1

    def blanks_and_comments(self) -> None:
        while self.i < self.n:
            ch = self.t[self.i]
            if ch in " \t\r\n":
                self.i += 1
            elif ch == "#":
                end = self.t.find("\n", self.i)
                self.i = self.n if end < 0 else end
            else:
                return

    def expect(self, token: str) -> None:
        if not self.t.startswith(token, self.i):
            raise self.fail(f"expected {token!r}")
        self.i += len(token)

    def run(self) -> dict[tuple[str, ...], ArraySpan]:
        table: tuple[str, ...] = ()
        while True:
            self.blanks_and_comments()
            if self.i >= self.n:
                return self.arrays
            statement_start = self.t.rfind("\n", 0, self.i) + 1
            if self.t.startswith("[[", self.i):
                self.i += 2
                table = (*self.key(), "[]")  # items of arrays of tables are not addressed
                self.blanks()
                self.expect("]]")
            elif self.t[self.i] == "[":
                self.i += 1
                table = self.key()
                self.blanks()
                self.expect("]")
            else:
                key = self.key()
                self.blanks()
                self.expect("=")
                self.blanks()
                self.value((*table, *key), statement_start)

    def key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            self.blanks()
            parts.append(self.simple_key())
            self.blanks()
            if self.i < self.n and self.t[self.i] == ".":
                self.i += 1
                continue
            return tuple(parts)

    def simple_key(self) -> str:
        if self.i < self.n and self.t[self.i] in "\"'":
            start = self.i
            self.string()
            raw = self.t[start : self.i]
            if raw[0] == "'":
                return raw[1:-1]
            try:
                return json.loads(raw)
            except ValueError:
                return raw[1:-1]
        m = _BARE_KEY.match(self.t, self.i)
        if not m:
            raise self.fail("expected a key")
        self.i = m.end()
        return m.group(0)

    def string(self) -> None:
        t = self.t
        if t.startswith('"""', self.i) or t.startswith("'''", self.i):
            quote = t[self.i]
            self.i += 3
            while self.i < self.n:
                if quote == '"' and t[self.i] == "\\":
                    self.i += 2
                elif t.startswith(quote * 3, self.i):
                    run = 3
                    while run < 5 and self.i + run < self.n and t[self.i + run] == quote:
                        run += 1  # up to two quotes right before the closing ones belong to the content
                    self.i += run
                    return
                else:
                    self.i += 1
            raise self.fail("unterminated multi-line string")
        quote = t[self.i]
        self.i += 1
        while self.i < self.n and t[self.i] != quote:
            if t[self.i] in "\r\n":
                raise self.fail("newline in a string")
            self.i += 2 if quote == '"' and t[self.i] == "\\" else 1
        if self.i >= self.n:
            raise self.fail("unterminated string")
        self.i += 1

    def value(self, path: tuple[str, ...], statement_start: int) -> bool:
        """Skip one value; True when it was a string."""
        if self.i >= self.n:
            raise self.fail("expected a value")
        ch = self.t[self.i]
        if ch in "\"'":
            self.string()
            return True
        if ch == "[":
            self.array(path, statement_start)
        elif ch == "{":
            self.inline_table(path, statement_start)
        else:
            m = _SCALAR.match(self.t, self.i)
            if m is None or not m.group(0).strip():
                raise self.fail("expected a value")
            self.i = m.end()
        return False

    def array(self, path: tuple[str, ...], statement_start: int) -> None:
        span = ArraySpan(self.i, self.i, statement_start=statement_start)
        self.i += 1
        index = 0
        while True:
            self.blanks_and_comments()
            if self.i < self.n and self.t[self.i] == "]":
                self.i += 1
                break
            start = self.i
            if self.value((*path, str(index)), statement_start):
                span.strings.append((start, self.i))
            index += 1
            self.blanks_and_comments()
            if self.i < self.n and self.t[self.i] == ",":
                self.i += 1
            elif self.i < self.n and self.t[self.i] == "]":
                continue
            else:
                raise self.fail("expected ',' or ']' in an array")
        span.end = self.i
        self.arrays[path] = span

    def inline_table(self, path: tuple[str, ...], statement_start: int) -> None:
        self.i += 1
        while True:
            self.blanks_and_comments()
            if self.i < self.n and self.t[self.i] == "}":
                self.i += 1
                return
            key = self.key()
            self.blanks()
            self.expect("=")
            self.blanks()
            self.value((*path, *key), statement_start)
            self.blanks_and_comments()
            if self.i < self.n and self.t[self.i] == ",":
                self.i += 1
            elif not (self.i < self.n and self.t[self.i] == "}"):
                raise self.fail("expected ',' or '}' in an inline table")


def array_spans(text: str) -> dict[tuple[str, ...], ArraySpan]:
    """Every array in the document by key path (``("project", "dependencies")``). Raises TomlScanError."""
    return _Scanner(text).run()
