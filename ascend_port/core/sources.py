"""Reading and writing source files without losing anything: encoding and PEP 263 cookie, BOM, line endings
(text is decoded without newline translation) and file mode."""

from __future__ import annotations

import ast
import codecs
import io
import itertools
import os
import re
import tempfile
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """The file cannot be read as source text; the message says why.

    ``binary`` marks files that are not text at all (a ``.py`` holding NUL bytes): skipped, not errors.
    """

    def __init__(self, message: str, *, binary: bool = False) -> None:
        super().__init__(message)
        self.binary = binary


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str  # as detected, e.g. "utf-8", "utf-8-sig" (BOM), "iso-8859-1"

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode_python(data: bytes) -> Source:
    """Decode Python source the way the interpreter does: BOM, then a PEP 263 cookie, else UTF-8."""
    if b"\0" in data:
        raise SourceError("binary file: contains NUL bytes", binary=True)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return Source(data.decode(encoding), encoding)
    except UnicodeDecodeError as error:
        raise SourceError(_undecodable(data, error)) from None
    except (SyntaxError, LookupError) as error:
        raise SourceError(f"cannot decode: {error}") from None


def _undecodable(data: bytes, error: UnicodeDecodeError) -> str:
    """Where the first byte that does not decode is, as an editor shows it (line and column, 1-based)."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    byte = data[error.start : error.start + 1].hex()
    return f"cannot decode line {line}, column {column}: byte 0x{byte} is not {error.encoding}"


def python_syntax_error(text: str) -> str | None:
    """Python's own verdict on ``text`` where its parser rejects it ("'(' was never closed (line 2, column 8)"): the
    message and position a user knows from Python, which LibCST's parser reports at the token where it gave up."""
    try:
        compile(text, "<source>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "")
        return f"{error.msg} ({where})"
    except ValueError:  # NUL bytes: decode_python refuses those first
        return None
    return None


def decode_text(data: bytes) -> Source:
    """Decode a non-Python text file: UTF-8 (with or without BOM)."""
    if b"\0" in data:
        raise SourceError("binary file: contains NUL bytes", binary=True)
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        return Source(data.decode(encoding), encoding)
    except UnicodeDecodeError as error:
        raise SourceError(f"not UTF-8 text: {error}") from None


# str.splitlines also breaks at \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029, which Python's tokenizer does not: a form
# feed between functions or a \u2028 in a string would shift every line number ast gives after it.
_NOT_PYTHON_NEWLINES = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_PYTHON_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def python_lines(text: str) -> list[str]:
    """The lines of ``text`` with their endings, as Python numbers them (``\r\n``, ``\r`` and ``\n`` only)."""
    if not _NOT_PYTHON_NEWLINES.search(text):
        return text.splitlines(keepends=True)  # the same split, in C
    return _PYTHON_LINE.findall(text)


def read_only(path: Path) -> bool:
    """No write bit at all, or no write access (the mode bits count for root, whom os.access lets write all): a file
    the port refuses to rewrite, as black and ruff do ("Permission denied")."""
    return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` through a temporary file in the same folder, keeping the file's mode."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".ascend-port.tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def line_offsets(lines: Sequence[str]) -> list[int]:
    """Offset of the start of each line in the joined text, plus the text's length at the end."""
    return [0, *itertools.accumulate(map(len, lines))]
