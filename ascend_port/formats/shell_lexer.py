"""A careful shell tokenizer, not a full parser: words, quoting (``'...'``, ``"..."``, ``$'...'``, backslashes),
expansions (``$NAME``, ``${...}``, ``$(...)``, backticks, ``$((...))``), operators, redirections, comments and heredocs.
Enough to know which word is a command, which words are its arguments and where variables are read; comments,
quoted text and heredoc bodies never produce words. Makefile recipes are read with make's ``$(X)`` and ``$$``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REDIRECTIONS = ("<<<", "<<-", "<<", ">>", ">&", "<&", ">|", "<>", ">", "<")


@dataclass
class Word:
    start: int
    end: int
    literal: str | None  # the value when the word has no expansion (quotes removed)
    redirect: bool = False  # the target of a redirection or a heredoc delimiter, not an argument


@dataclass
class VarRef:
    start: int  # span of the name in ``$NAME`` / ``${NAME...}``
    end: int
    name: str


@dataclass
class Lexed:
    commands: list[list[Word]] = field(default_factory=list)
    var_refs: list[VarRef] = field(default_factory=list)
    heredocs: list[tuple[int, int]] = field(default_factory=list)  # body spans
    safe_line_starts: list[int] = field(default_factory=lambda: [0])  # where a comment line may go


@dataclass
class _CommandList:
    """What one ``_Lexer.commands`` call tracks; a nested list (``$(...)``, backquotes) has its own."""

    words: list[Word] = field(default_factory=list)  # the command being read
    paren: int = 0  # subshells ``( ... )`` opened in this list and not closed yet
    redirect_next: bool = False  # the next word is the target of a redirection


class _Lexer:
    def __init__(self, text: str, make: bool) -> None:
        self.t = text
        self.n = len(text)
        self.i = 0
        self.make = make  # Makefile recipe: `$(X)` is make's, `$$` is the shell's `$`
        self.out = Lexed()
        self.pending: list[tuple[str, bool]] = []  # heredoc delimiters waiting for the end of the line
        self.depth = 0
        self.backquoted = 0  # inside `...`, an unescaped backquote always closes it

    # --- command lists ----------------------------------------------------------------------------------------

    def commands(self, terminator: str | None) -> None:
        """Read commands up to ``terminator`` (a backquote, the ``)`` of ``$(...)``) or the end of the text,
        dispatching on the character at hand."""
        state = _CommandList()
        while self.i < self.n:
            c = self.t[self.i]
            if terminator == "`" and c == "`":
                self.i += 1
                break
            if c == ")":
                if self.close_paren(state, terminator):
                    break
            elif self.skip_blank(c):
                pass  # spaces and line continuations only separate words
            elif c == "\n":
                self.newline(state, terminator)
            elif c == "#":
                end = self.t.find("\n", self.i)
                self.i = self.n if end < 0 else end
            elif c in ";&|":
                self.separator(state)
            elif c == "(":
                self.open_paren(state)
            elif c in "<>":
                self.redirection(state)
            else:
                self.command_word(state)
        self.end_command(state)

    def end_command(self, state: _CommandList) -> None:
        if state.words:
            self.out.commands.append(state.words)
        state.words = []

    def close_paren(self, state: _CommandList, terminator: str | None) -> bool:
        """At a ``)``: True when it ends this command list (the ``)`` of ``$(...)``)."""
        self.i += 1
        self.end_command(state)
        if state.paren > 0:
            state.paren -= 1
            return False
        return terminator == ")"  # otherwise the end of a `case` pattern

    def skip_blank(self, c: str) -> bool:
        """Step over a space, a tab or a line continuation (which joins two lines into one command)."""
        t = self.t
        if c in " \t":
            self.i += 1
        elif c == "\\" and t.startswith("\n", self.i + 1):
            self.i += 2
        elif c == "\\" and t.startswith("\r\n", self.i + 1):
            self.i += 3
        elif c == "\r" and t.startswith("\n", self.i + 1):
            self.i += 1  # a CRLF line end: the LF is read next
        else:
            return False
        return True

    def newline(self, state: _CommandList, terminator: str | None) -> None:
        self.i += 1
        self.end_command(state)
        self.heredoc_bodies()
        if terminator is None and self.depth == 0:
            self.out.safe_line_starts.append(self.i)

    def separator(self, state: _CommandList) -> None:
        """``;``, ``&``, ``|`` and their doubles end a command; ``&>`` and ``&>>`` redirect both outputs instead."""
        t = self.t
        self.end_command(state)
        if t.startswith("&>", self.i):
            self.i += 3 if t.startswith("&>>", self.i) else 2
            state.redirect_next = True
            return
        self.i += 1
        while self.i < self.n and t[self.i] in ";&|":
            self.i += 1

    def open_paren(self, state: _CommandList) -> None:
        self.end_command(state)
        self.i += 1
        if self.t.startswith("(", self.i):
            self.skip_balanced(self.i + 1, 2)  # ((arithmetic))
        else:
            state.paren += 1

    def redirection(self, state: _CommandList) -> None:
        """A redirection operator; a heredoc's delimiter is read now and its body after the end of the line."""
        t = self.t
        op = next(o for o in _REDIRECTIONS if t.startswith(o, self.i))
        self.i += len(op)
        if op not in ("<<", "<<-"):
            state.redirect_next = True
            return
        while self.i < self.n and t[self.i] in " \t":
            self.i += 1
        delimiter = self.word()
        delimiter.redirect = True
        raw = t[delimiter.start : delimiter.end]
        self.pending.append((re.sub(r"[\"'\\]", "", raw), op == "<<-"))
        state.words.append(delimiter)

    def command_word(self, state: _CommandList) -> None:
        word = self.word()
        if word.end == word.start:  # a character no rule above consumed: step over it
            self.i += 1
            return
        if state.redirect_next:
            word.redirect, state.redirect_next = True, False
            state.words.append(word)
        elif self.t[word.start : word.end].isdigit() and self.i < self.n and self.t[self.i] in "<>":
            return  # a file descriptor number (2>&1)
        else:
            state.words.append(word)

    def heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self.pending:
            start = self.i
            while self.i < self.n:
                end = self.t.find("\n", self.i)
                line_end = self.n if end < 0 else end
                line = self.t[self.i : line_end].rstrip("\r")
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    self.out.heredocs.append((start, self.i))
                    self.i = line_end + 1 if end >= 0 else self.n
                    break
                self.i = line_end + 1 if end >= 0 else self.n
            else:
                self.out.heredocs.append((start, self.n))
        self.pending = []

    def skip_balanced(self, start: int, opened: int) -> None:
        """Skip to after the parentheses opened before ``start`` close (``opened`` of them)."""
        depth, i = opened, start
        while i < self.n and depth:
            depth += {"(": 1, ")": -1}.get(self.t[i], 0)
            i += 1
        self.i = i

    # --- words -------------------------------------------------------------------------------------------------

    def word(self) -> Word:
        t, start, parts, literal = self.t, self.i, [], True
        while self.i < self.n:
            c = t[self.i]
            if c in " \t\n;&|<>()" or (c == "\r" and t.startswith("\n", self.i + 1)) or (c == "`" and self.backquoted):
                break
            if c == "\\":
                if t.startswith("\n", self.i + 1):
                    self.i += 2
                    continue
                parts.append(t[self.i + 1 : self.i + 2])
                self.i += 2
            elif c == "'":
                end = t.find("'", self.i + 1)
                end = self.n if end < 0 else end
                parts.append(t[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                value = self.double_quoted()
                if value is None:
                    literal = False
                else:
                    parts.append(value)
            elif c == "$":
                if self.dollar():
                    literal = False
                else:
                    parts.append("$")
            elif c == "`":
                self.backticks()
                literal = False
            else:
                parts.append(c)
                self.i += 1
        return Word(start, min(self.i, self.n), "".join(parts) if literal else None)

    def double_quoted(self) -> str | None:
        t, literal = self.t, True
        parts: list[str] = []
        self.i += 1
        while self.i < self.n:
            c = t[self.i]
            if c == '"':
                self.i += 1
                return "".join(parts) if literal else None
            if c == "\\" and self.i + 1 < self.n:
                if t[self.i + 1] in '$`"\\\n':
                    if t[self.i + 1] != "\n":
                        parts.append(t[self.i + 1])
                    self.i += 2
                else:
                    parts.append(c)
                    self.i += 1
            elif c == "$":
                if self.dollar():
                    literal = False
                else:
                    parts.append("$")
            elif c == "`":
                if self.backquoted:
                    return None  # the enclosing `...` ends here
                self.backticks()
                literal = False
            else:
                parts.append(c)
                self.i += 1
        return None

    def backticks(self) -> None:
        self.i += 1
        self.depth += 1
        self.backquoted += 1
        self.commands("`")
        self.backquoted -= 1
        self.depth -= 1

    def dollar(self) -> bool:
        """At a ``$``: consume the expansion; False when the ``$`` is a literal character."""
        j = self.i + 1
        if self.make:
            if j < self.n and self.t[j] == "$":
                self.i = j  # `$$` is the shell's `$`
                return self.shell_dollar()
            return self.make_reference()
        return self.shell_dollar()

    def make_reference(self) -> bool:
        t, j = self.t, self.i + 1
        if j >= self.n:
            self.i = j
            return False
        if t[j] in "({":
            close = {"(": ")", "{": "}"}[t[j]]
            depth, k = 1, j + 1
            while k < self.n and depth:
                depth += 1 if t[k] == t[j] else -1 if t[k] == close else 0
                k += 1
            inner = t[j + 1 : k - 1]
            m = _NAME.fullmatch(inner)
            if m:
                self.out.var_refs.append(VarRef(j + 1, k - 1, inner))
            elif inner.startswith("shell "):
                nested = _Lexer(inner[6:], make=False)  # $(shell cmd) runs cmd in a shell
                nested.commands(None)
                _shift(nested.out, j + 7, self.out)
            self.i = k
            return True
        self.i = j + 1  # $@, $<, $X: one-character make variables
        return True

    def shell_dollar(self) -> bool:
        t, j = self.t, self.i + 1
        if j >= self.n:
            self.i = j
            return False
        c = t[j]
        if c == "(":
            if t.startswith("((", j):
                self.skip_balanced(j + 2, 2)
                return True
            self.i = j + 1
            self.depth += 1
            self.commands(")")
            self.depth -= 1
            return True
        if c == "{":
            depth, k = 1, j + 1
            while k < self.n and depth:
                depth += {"{": 1, "}": -1}.get(t[k], 0)
                k += 1
            m = re.match(r"[#!]?([A-Za-z_][A-Za-z0-9_]*)", t[j + 1 : k])
            if m:
                self.out.var_refs.append(VarRef(j + 1 + m.start(1), j + 1 + m.end(1), m.group(1)))
            self.i = k
            return True
        if c == "'":
            k = j + 1
            while k < self.n and t[k] != "'":
                k += 2 if t[k] == "\\" else 1
            self.i = k + 1
            return True
        if c == '"':
            self.i = j
            self.double_quoted()
            return True
        m = _NAME.match(t, j)
        if m:
            self.out.var_refs.append(VarRef(j, m.end(), m.group(0)))
            self.i = m.end()
            return True
        if c in "@*#?$!-0123456789":
            self.i = j + 1
            return True
        self.i = j
        return False


def _shift(inner: Lexed, offset: int, outer: Lexed) -> None:
    for command in inner.commands:
        outer.commands.append([Word(w.start + offset, w.end + offset, w.literal, w.redirect) for w in command])
    outer.var_refs.extend(VarRef(r.start + offset, r.end + offset, r.name) for r in inner.var_refs)
    outer.heredocs.extend((s + offset, e + offset) for s, e in inner.heredocs)


def lex(text: str, *, make: bool = False) -> Lexed:
    lexer = _Lexer(text, make)
    lexer.commands(None)
    return lexer.out
