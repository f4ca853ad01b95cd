"""Shell code: ``*.sh`` scripts, and the shell parts of Makefiles, Dockerfiles and notebook ``!`` lines (NPU610-616).

The tokenizer (``shell_lexer``) says which word is a command, which words are its arguments and where variables are
set or read; this module decides what changes. Comments, single-quoted strings, plain text in double quotes and
heredoc bodies are never edited (heredocs feed text to a program: even an unquoted one may be a config file or a
Python script).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

from ascend_port.codemods.project_rules import (
    BACKEND_FLAG, DEVICE_FLAG, NVIDIA_SMI, NVIDIA_SMI_QUERY, SHELL_CUDA_ENV_VAR, SHELL_NCCL_ENV_VAR,
    SHELL_NCCL_NO_EQUIVALENT,
)
from ascend_port.codemods.shell_lexer import Word, lex
from ascend_port.codemods.textedit import Edit, TextPort
from ascend_port.rules import Rule, Selection
from ascend_port.transforms.device import CUDA_ENV_VARS
from ascend_port.transforms.distributed import ENV_NEAREST, ENV_REVIEW, ENV_SAME, NCCL_ENV_NAME

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")

# --- what changes --------------------------------------------------------------------------------------------------

# The same name tables as the Python rules (NPU111, NPU207-NPU209), so a script and the code it launches agree.
ENV_HIGH: dict[str, str] = {**CUDA_ENV_VARS, **ENV_SAME}


def env_rename(name: str) -> tuple[Rule, str, str | None] | None:
    """(rule, Ascend name, note on the value or None) for a CUDA/NCCL variable with an Ascend counterpart."""
    if name in ENV_HIGH:
        return SHELL_CUDA_ENV_VAR, ENV_HIGH[name], None
    if name in ENV_REVIEW:
        new, note = ENV_REVIEW[name]
        return SHELL_NCCL_ENV_VAR, new, note
    return None


def env_gap(name: str) -> str | None:
    """The TODO message for an NCCL variable with no counterpart, else None."""
    if not NCCL_ENV_NAME.match(name) or name in ENV_HIGH or name in ENV_REVIEW:
        return None
    hint = ENV_NEAREST.get(name, "no Ascend setting is known to do the same")
    return f"{name} has no HCCL equivalent and no effect on NPU; {hint}"


def rename_site(port: TextPort, offset: int, name: str, todo: Callable[[Rule, int, str], None] | None) -> None:
    """Rename the variable at ``offset`` or, where it is set (``todo`` given), leave the TODO it needs."""
    renamed = env_rename(name)
    if renamed:
        rule, new, note = renamed
        if port.fix(rule, offset, [Edit(offset, offset + len(name), new)], f"{name} -> {new}") and note and todo:
            todo(rule, offset, note)
    elif todo and (gap := env_gap(name)):
        todo(SHELL_NCCL_NO_EQUIVALENT, offset, gap)


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
        if start not in seen:
            seen.add(start)
            rename_site(port, ctx.base + start, name, todo if setting else None)

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
