"""Shell code: ``*.sh`` scripts, and the shell parts of Makefiles, Dockerfiles and notebook ``!`` lines.

A careful tokenizer, not a full parser: it knows words, quoting (``'...'``, ``"..."``, ``$'...'``, backslashes),
expansions (``$NAME``, ``${...}``, ``$(...)``, backticks, ``$((...))``), operators, redirections, comments and heredocs.
That is enough to know which word is a command, which words are its arguments and where variables are set or read,
and to never edit a comment, a single-quoted string, plain text in double quotes or a heredoc body (heredocs feed
text to a program: even an unquoted one may be a config file or a Python script).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from ascend_port.codemods.project_rules import (
    BACKEND_FLAG, DEVICE_FLAG, NVIDIA_SMI, NVIDIA_SMI_QUERY, SHELL_CUDA_ENV_VAR, SHELL_NCCL_ENV_VAR,
    SHELL_NCCL_NO_EQUIVALENT,
)
from ascend_port.codemods.textedit import Edit, TextPort
from ascend_port.rules import Rule, Selection
from ascend_port.transforms.device import CUDA_ENV_VARS

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
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


class _Lexer:
    def __init__(self, text: str, make: bool) -> None:
        self.t = text
        self.n = len(text)
        self.i = 0
        self.make = make  # Makefile recipe: `$(X)` is make's, `$$` is the shell's `$`
        self.out = Lexed()
        self.pending: list[tuple[str, bool]] = []  # heredoc delimiters waiting for the end of the line
        self.depth = 0

    # --- command lists ----------------------------------------------------------------------------------------

    def commands(self, terminator: str | None) -> None:
        t, words, paren = self.t, [], 0
        redirect_next = False

        def end_command() -> None:
            nonlocal words
            if words:
                self.out.commands.append(words)
            words = []

        while self.i < self.n:
            c = t[self.i]
            if terminator == "`" and c == "`":
                self.i += 1
                break
            if c == ")":
                self.i += 1
                end_command()
                if paren > 0:
                    paren -= 1
                    continue
                if terminator == ")":
                    break
                continue  # the end of a `case` pattern
            if c in " \t":
                self.i += 1
            elif c == "\\" and t.startswith("\n", self.i + 1):
                self.i += 2
            elif c == "\\" and t.startswith("\r\n", self.i + 1):
                self.i += 3
            elif c == "\r" and t.startswith("\n", self.i + 1):
                self.i += 1
            elif c == "\n":
                self.i += 1
                end_command()
                self.heredoc_bodies()
                if terminator is None and self.depth == 0:
                    self.out.safe_line_starts.append(self.i)
            elif c == "#":
                end = t.find("\n", self.i)
                self.i = self.n if end < 0 else end
            elif c in ";&|":
                end_command()
                if t.startswith("&>", self.i):
                    self.i += 3 if t.startswith("&>>", self.i) else 2
                    redirect_next = True
                    continue
                self.i += 1
                while self.i < self.n and t[self.i] in ";&|":
                    self.i += 1
            elif c == "(":
                end_command()
                self.i += 1
                if t.startswith("(", self.i):
                    self.skip_balanced(self.i + 1, 2)  # ((arithmetic))
                else:
                    paren += 1
            elif c in "<>":
                op = next(o for o in _REDIRECTIONS if t.startswith(o, self.i))
                self.i += len(op)
                if op in ("<<", "<<-"):
                    while self.i < self.n and t[self.i] in " \t":
                        self.i += 1
                    delimiter = self.word()
                    delimiter.redirect = True
                    raw = t[delimiter.start:delimiter.end]
                    self.pending.append((re.sub(r"[\"'\\]", "", raw), op == "<<-"))
                    words.append(delimiter)
                else:
                    redirect_next = True
            else:
                word = self.word()
                if word.end == word.start:  # a character no rule above consumed: step over it
                    self.i += 1
                    continue
                if redirect_next:
                    word.redirect, redirect_next = True, False
                    words.append(word)
                elif t[word.start:word.end].isdigit() and self.i < self.n and t[self.i] in "<>":
                    continue  # a file descriptor number (2>&1)
                else:
                    words.append(word)
        end_command()

    def heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self.pending:
            start = self.i
            while self.i < self.n:
                end = self.t.find("\n", self.i)
                line_end = self.n if end < 0 else end
                line = self.t[self.i:line_end].rstrip("\r")
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
            if c in " \t\n;&|<>()" or (c == "\r" and t.startswith("\n", self.i + 1)):
                break
            if c == "\\":
                if t.startswith("\n", self.i + 1):
                    self.i += 2
                    continue
                parts.append(t[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                end = t.find("'", self.i + 1)
                end = self.n if end < 0 else end
                parts.append(t[self.i + 1:end])
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
        t, parts, literal = self.t, [], True
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
                self.backticks()
                literal = False
            else:
                parts.append(c)
                self.i += 1
        return None

    def backticks(self) -> None:
        self.i += 1
        self.depth += 1
        self.commands("`")
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
            inner = t[j + 1:k - 1]
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
            m = re.match(r"[#!]?([A-Za-z_][A-Za-z0-9_]*)", t[j + 1:k])
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


# --- what changes --------------------------------------------------------------------------------------------------

_TORCH_NCCL = {"BLOCKING_WAIT", "ASYNC_ERROR_HANDLING", "DESYNC_DEBUG", "ENABLE_MONITORING", "HEARTBEAT_TIMEOUT_SEC",
               "DUMP_ON_TIMEOUT", "TRACE_BUFFER_SIZE", "TRACE_CPP_STACK", "HIGH_PRIORITY"}
ENV_HIGH: dict[str, str] = {**CUDA_ENV_VARS, **{f"TORCH_NCCL_{s}": f"TORCH_HCCL_{s}" for s in _TORCH_NCCL}}
ENV_MEDIUM: dict[str, str] = {
    "NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME",
    "NCCL_ASYNC_ERROR_HANDLING": "TORCH_HCCL_ASYNC_ERROR_HANDLING",
    "NCCL_BLOCKING_WAIT": "TORCH_HCCL_BLOCKING_WAIT",
    "NCCL_DESYNC_DEBUG": "TORCH_HCCL_DESYNC_DEBUG",
}
_NO_EQUIVALENT = {
    "NCCL_DEBUG": "NCCL_DEBUG has no HCCL equivalent; CANN logs with ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info) and "
                  "ASCEND_SLOG_PRINT_TO_STDOUT=1",
    "NCCL_DEBUG_SUBSYS": "NCCL_DEBUG_SUBSYS has no HCCL equivalent; CANN logs with ASCEND_GLOBAL_LOG_LEVEL",
    "NCCL_BUFFSIZE": "NCCL_BUFFSIZE: HCCL_BUFFSIZE is the counterpart but in MB (NCCL_BUFFSIZE is in bytes): convert the value",
    "NCCL_ALGO": "NCCL_ALGO: HCCL_ALGO is the counterpart but has its own value syntax: rewrite the value by hand",
}


def env_rename(name: str) -> tuple[Rule, str] | None:
    """(rule, Ascend name) for a CUDA/NCCL variable with a counterpart of the same meaning."""
    if name in ENV_HIGH:
        return SHELL_CUDA_ENV_VAR, ENV_HIGH[name]
    if name in ENV_MEDIUM:
        return SHELL_NCCL_ENV_VAR, ENV_MEDIUM[name]
    return None


def env_gap(name: str) -> str | None:
    """The TODO message for an NCCL variable with no counterpart of the same meaning, else None."""
    if name in _NO_EQUIVALENT:
        return _NO_EQUIVALENT[name]
    if name.startswith("NCCL_") or name.startswith("TORCH_NCCL_"):
        return f"{name} is an NCCL setting that HCCL ignores: drop it or find the HCCL_* counterpart"
    return None


DEVICE_FLAGS = {"--device", "--device-type", "--device_type"}
BACKEND_FLAGS = {"--backend", "--dist-backend", "--dist_backend", "--ddp-backend", "--ddp_backend",
                 "--distributed-backend", "--distributed_backend"}
_DEVICE_VALUE = re.compile(r"(?P<q>[\"']?)cuda(?P<rest>:[^\"'\s]*)?(?P=q)")
_BACKEND_VALUE = re.compile(r"(?P<q>[\"']?)(?P<inner>[\w:,]+)(?P=q)")
_PREFIX_WORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "nohup", "command",
                 "builtin"}
_DECLARE = {"export", "declare", "typeset", "local", "readonly", "unset"}
COUNT_MESSAGE = ("nvidia-smi -L lists GPUs, here to count them; count NPUs with "
                 "`python -c \"import torch, torch_npu; print(torch.npu.device_count())\"` or read `npu-smi info -l`")


@dataclass
class ShellContext:
    """Where the shell code sits in the file the TextPort edits, and where its TODO comments go."""

    base: int = 0  # offset of the code in the port's text
    todo_above: int | None = None  # line start for TODOs (default: the safe line above the finding)
    todo_indent: str | None = None
    todo_prefix: str = "#"
    make: bool = False


def port_shell_code(port: TextPort, code: str, ctx: ShellContext | None = None) -> None:
    """Record the edits, findings and TODOs for the shell code ``code`` (found at ``ctx.base`` in ``port.text``)."""
    ctx = ctx or ShellContext()
    lexed = lex(code, make=ctx.make)
    safe = [s + ctx.base for s in lexed.safe_line_starts]
    seen: set[int] = set()

    def raw(word: Word) -> str:
        return code[word.start:word.end]

    def todo(rule: Rule, offset: int, message: str) -> None:
        if ctx.todo_above is not None:
            port.todo(rule, offset, message, above=ctx.todo_above, indent=ctx.todo_indent, prefix=ctx.todo_prefix)
            return
        above = max(s for s in safe if s <= offset)
        port.todo(rule, offset, message, above=above, prefix=ctx.todo_prefix)

    def name_site(start: int, name: str, setting: bool) -> None:
        if start in seen:
            return
        seen.add(start)
        offset = ctx.base + start
        renamed = env_rename(name)
        if renamed:
            rule, new = renamed
            port.fix(rule, offset, [Edit(offset, offset + len(name), new)], f"{name} -> {new}")
        elif setting and (gap := env_gap(name)):
            todo(SHELL_NCCL_NO_EQUIVALENT, offset, gap)

    for ref in lexed.var_refs:
        name_site(ref.start, ref.name, setting=False)

    for command in lexed.commands:
        args = [w for w in command if not w.redirect]
        i = 0
        while i < len(args):
            m = _ASSIGNMENT.match(raw(args[i]))
            if m:
                name_site(args[i].start, m.group(1), setting=True)
                i += 1
            elif args[i].literal in _PREFIX_WORDS:
                i += 1
            elif args[i].literal in ("sudo", "env"):
                i += 1
                while i < len(args) and (raw(args[i]).startswith("-") or _ASSIGNMENT.match(raw(args[i]))):
                    if m := _ASSIGNMENT.match(raw(args[i])):
                        name_site(args[i].start, m.group(1), setting=True)
                    i += 1
            else:
                break
        command_word = args[i] if i < len(args) else None
        if command_word is not None and command_word.literal in _DECLARE:
            for word in args[i + 1:]:
                m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(=|$)", raw(word))
                if m and not raw(word).startswith("-"):
                    name_site(word.start, m.group(1), setting=True)
        if command_word is not None and (command_word.literal or "").rsplit("/", 1)[-1] == "nvidia-smi":
            _nvidia_smi(port, todo, ctx.base, command_word, [raw(w) for w in args[i + 1:]])
        for word in args:  # an unquoted argument (`command -v nvidia-smi`); quoted text is text
            if word is not command_word and raw(word).rsplit("/", 1)[-1] == "nvidia-smi":
                todo(NVIDIA_SMI_QUERY, ctx.base + word.start,
                     "looks for nvidia-smi; the Ascend tool is npu-smi (`npu-smi info`)")
        _flags(port, ctx.base, code, args)


def _nvidia_smi(port: TextPort, todo, base: int, word: Word, args: list[str]) -> None:
    offset = base + word.start
    if not args:
        port.fix(NVIDIA_SMI, offset, [Edit(offset, base + word.end, "npu-smi info")], "nvidia-smi -> npu-smi info")
    elif any(a in ("-L", "--list-gpus") for a in args):
        todo(NVIDIA_SMI_QUERY, offset, COUNT_MESSAGE)
    else:
        todo(NVIDIA_SMI_QUERY, offset,
             f"nvidia-smi {' '.join(args)}: npu-smi has other options and output; see `npu-smi info -h`")


def _flags(port: TextPort, base: int, code: str, args: list[Word]) -> None:
    for k, word in enumerate(args):
        text = code[word.start:word.end]
        flag, value_start, value = text, None, None
        if "=" in text and text.startswith("--"):
            flag, value = text.split("=", 1)
            value_start = word.start + len(flag) + 1
        elif k + 1 < len(args) and text in DEVICE_FLAGS | BACKEND_FLAGS:
            value_start = args[k + 1].start
            value = code[args[k + 1].start:args[k + 1].end]
        if value is None:
            continue
        offset = base + value_start
        if flag in DEVICE_FLAGS and (m := _DEVICE_VALUE.fullmatch(value)):
            at = offset + len(m.group("q"))
            port.fix(DEVICE_FLAG, at, [Edit(at, at + 4, "npu")], f"{flag} {value} -> npu")
        elif flag in BACKEND_FLAGS and (m := _BACKEND_VALUE.fullmatch(value)):
            items = m.group("inner").split(",")
            new = [{"nccl": "hccl", "cuda:nccl": "npu:hccl"}.get(item, item) for item in items]
            if new != items:
                at = offset + len(m.group("q"))
                port.fix(BACKEND_FLAG, at, [Edit(at, at + len(m.group("inner")), ",".join(new))],
                         f"{flag} {m.group('inner')} -> {','.join(new)}")


class ShellHandler:
    def port(self, data: bytes, selection: Selection, options: Mapping[str, str]):
        from ascend_port.codemods import Ported
        from ascend_port.sources import decode_text

        source = decode_text(data)
        port = TextPort(source.text, selection)
        port_shell_code(port, source.text)
        return Ported(source, port.result(), port.findings)
