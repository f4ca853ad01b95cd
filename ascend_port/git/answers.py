"""Reading the answers of the interactive review: single keypresses on a terminal (no Enter, like git's
``interactive.singleKey``), or one answer per line from a pipe or file so a review can be scripted."""

from __future__ import annotations

import os
import select
import sys
from typing import Protocol, TextIO

from rich.console import Console


class Keys(Protocol):
    def key(self, prompt: str) -> str | None: ...  # one answer; None at end of input
    def line(self, prompt: str) -> str | None: ...  # a line of text (for g and /)


class LineKeys:
    """Answers from a stream, one per line (its first character is the key, the rest can be the argument of
    ``g`` and ``/``: ``g3``, ``/cuda``). End of input means ``q``."""

    def __init__(self, console: Console, stream: TextIO) -> None:
        self.console = console
        self.stream = stream
        self._rest = ""

    def key(self, prompt: str) -> str | None:
        self.console.print(prompt, end="", style="bold blue", markup=False)
        raw = self.stream.readline()
        if not raw:
            self.console.print()
            return None
        text = raw.strip()
        self.console.print(text, markup=False)  # echoed, so the transcript reads like a session
        self._rest = text[1:].strip()
        return text[:1]

    def line(self, prompt: str) -> str | None:
        self.console.print(prompt, end="", style="bold blue", markup=False)
        if self._rest:
            text, self._rest = self._rest, ""
        else:
            raw = self.stream.readline()
            if not raw:
                self.console.print()
                return None
            text = raw.rstrip("\r\n")
        self.console.print(text, markup=False)
        return text


class TerminalKeys(LineKeys):
    """Single keypresses on a terminal (no Enter), like git's ``interactive.singleKey``. Ctrl-C still interrupts:
    the terminal keeps its signals, and its mode is restored whatever happens."""

    def key(self, prompt: str) -> str | None:
        import termios
        import tty

        self.console.print(prompt, end="", style="bold blue", markup=False)
        self.console.file.flush()
        fd = self.stream.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            data = os.read(fd, 1)
            if data == b"\x1b":  # an arrow or function key: drop the rest of its escape sequence
                while select.select([fd], [], [], 0.05)[0]:
                    os.read(fd, 16)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if data in (b"", b"\x04"):
            self.console.print()
            return None
        key = data.decode("latin-1")
        key = "" if key in "\r\n\x1b" else key
        self.console.print(key, markup=False)
        return key


def keys_for(console: Console, stream: TextIO | None = None) -> Keys:
    stream = stream or sys.stdin
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return TerminalKeys(console, stream) if tty else LineKeys(console, stream)
