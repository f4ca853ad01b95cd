"""Dockerfiles: CUDA base images get a TODO (NPU630), ``ENV`` variables and shell-form ``RUN``/``CMD``/``ENTRYPOINT``
go through the shell rules. Instructions span continuation lines (the escape character, ``\\`` unless a
``# escape=`` directive says otherwise); TODO comments go above the instruction, at column 0. The exec form
(``CMD ["python", "train.py", "--device", "cuda"]``) is one command whose arguments are the JSON strings: the same
flag and install rules apply to them (and a ``["bash", "-c", "..."]`` script is shell code). Heredoc bodies are
left as they are."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.options import DEFAULT, PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.sources import line_offsets
from ascend_port.formats.shell_lexer import Word
from ascend_port.formats.textedit import TextPort
from ascend_port.rules.project.shell import ShellContext, port_argv, port_shell_code, rename_site

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# --- containers ----------------------------------------------------------------------------------------------------

CUDA_BASE_IMAGE = rule(
    "NPU630",
    "cuda-base-image",
    LOW,
    "Dockerfile `FROM nvidia/cuda...`, `nvcr.io/...` or a CUDA `pytorch/pytorch` image: TODO naming the Ascend "
    "image family.",
    """
    The image must bring CANN instead of CUDA: the `ascendai/cann` images (tags such as
    `8.5.0-910b-ubuntu22.04-py3.11`) or an Ascend PyTorch image built on them. Choose the CANN version that your
    NPU driver and torch_npu release support, then install torch and torch-npu in it.

    Before:
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
    After:
        # TODO(ascend-port): NPU630 [low] CUDA base image nvidia/cuda:12.1.0-devel-ubuntu22.04: use an Ascend CANN image ...
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
    """,
    example_file="Dockerfile",
)

_INSTRUCTION = re.compile(r"^\s*(?P<keyword>[A-Za-z]+)(?P<blank>\s+|$)")
_FLAGS = re.compile(r"(?:--[a-z-]+(?:=\S*)?\s+)*")
CUDA_IMAGE = re.compile(r"(?i)^(?:docker\.io/)?(?:nvidia/cuda|nvcr\.io/|nvidia/|pytorch/pytorch:.*cuda)")
BASE_MESSAGE = (
    "CUDA base image {image}: use an Ascend CANN image (ascendai/cann:<cann>-<chip>-<os>-py<ver>, e.g. "
    "ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11, or an Ascend PyTorch image built on it); check that "
    "the CANN version matches your NPU driver and torch_npu release"
)
_HEREDOC = re.compile(r"<<-?[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?")
_ENV_PAIR = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")
_UNQUOTED_VALUE = re.compile(r"[^\s\\]*")


def _escape_char(text: str) -> str:
    for line in text.splitlines():
        m = re.match(r"^#\s*escape\s*=\s*(\S)\s*$", line)
        if m:
            return m.group(1)
        if not re.match(r"^#\s*\w+\s*=", line):
            break  # parser directives only come first
    return "\\"


def port_dockerfile(text: str, selection: Selection, options: PortOptions = DEFAULT) -> TextPort:
    port = TextPort(text, selection, options)
    escape = _escape_char(text)
    for start, end in _instructions(text, escape):
        _port_instruction(port, text, start, end, escape)
    return port


def _instructions(text: str, escape: str) -> Iterator[tuple[int, int]]:
    """The start and end offsets of each instruction (its continuation lines included, its line break not)."""
    lines = text.splitlines(keepends=True)
    offsets = line_offsets(lines)
    i = 0
    while i < len(lines):
        first = i
        content = lines[i].rstrip("\r\n")
        if not content.strip() or content.lstrip().startswith("#"):
            i += 1
            continue
        while i + 1 < len(lines) and lines[i].rstrip("\r\n").endswith(escape):
            i += 1
            # Comment and blank lines inside a continued instruction are dropped by Docker; it goes on after them.
            while i + 1 < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
        start = offsets[first]
        end = offsets[i] + len(lines[i].rstrip("\r\n"))
        i += 1
        # BuildKit heredocs (`RUN <<EOF` ... `EOF`): their lines are a script or a file, never instructions.
        for delimiter in _HEREDOC.findall(text[start:end]):
            while i < len(lines) and lines[i].rstrip("\r\n").lstrip("\t") != delimiter:
                i += 1
            i += 1
        yield start, end


def _port_instruction(port: TextPort, text: str, start: int, end: int, escape: str) -> None:
    """NPU630 for a FROM, the shell rules for ENV and the shell form of RUN, CMD and ENTRYPOINT."""
    m = _INSTRUCTION.match(text[start:end])
    if not m:
        return
    keyword = m.group("keyword").upper()
    body_start = start + m.end()
    body = text[body_start:end]
    if keyword == "FROM":
        image = _FLAGS.sub("", body, count=1).split()[0] if body.strip() else ""
        if CUDA_IMAGE.match(image):
            port.todo(CUDA_BASE_IMAGE, start, BASE_MESSAGE.format(image=image), above=start, indent="")
    elif keyword == "ENV":
        _env(port, body_start, body, start)
    elif keyword in ("RUN", "CMD", "ENTRYPOINT"):
        flags = _FLAGS.match(body)
        code_start = body_start + (flags.end() if flags else 0)
        code = text[code_start:end]
        if code.lstrip().startswith("["):
            _exec_form(port, code, code_start, start)
            return
        if escape != "\\":
            return  # the shell tokenizer knows only the backslash
        port_shell_code(port, code, ShellContext(base=code_start, todo_above=start, todo_indent=""))


def _exec_form(port: TextPort, code: str, code_start: int, line_start: int) -> None:
    """``["prog", "arg", ...]`` on one line, its strings without escapes (else it is left as it is)."""
    import json

    from ascend_port.formats.jsonspan import parse

    if "\\" in code or "\n" in code.strip():
        return
    try:
        argv = json.loads(code)
    except ValueError:
        return  # not JSON: Docker runs it as shell form, but a broken array is best left to its author
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return
    nodes = parse(code).items
    words = [Word(n.start + 1, n.end - 1, v) for n, v in zip(nodes, argv)]
    ctx = ShellContext(base=code_start, todo_above=line_start, todo_indent="")
    port_argv(port, code, words, ctx, quote='"')
    program = argv[0].rsplit("/", 1)[-1]
    if len(argv) >= 3 and program in ("sh", "bash", "dash", "zsh") and argv[1] in ("-c", "-lc", "-ec"):
        script = words[2]
        port_shell_code(
            port, argv[2], ShellContext(base=code_start + script.start, todo_above=line_start, todo_indent="")
        )


def _env(port: TextPort, body_start: int, body: str, line_start: int) -> None:
    """``ENV NAME=value ...`` or the legacy ``ENV NAME value``; values may read variables (``$NAME``). The values of
    the NPU208 settings HCCL reads in other units or words are converted as an ``export`` line's are."""
    pairs = list(_ENV_PAIR.finditer(body))
    names: list[tuple[int, str, tuple[int, str] | None]] = []
    if pairs and body.lstrip().startswith(pairs[0].group(0)):
        names = [
            (m.start("name"), m.group("name"), _pair_value(body, m.end()))
            for m in pairs
            if m.start() == 0 or body[m.start() - 1] in " \t\\\n"
        ]
    else:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)[ \t]+(\S.*?)?\s*$", body, re.DOTALL)
        if m:  # (a value over several lines is no plain literal: rename_site then keeps the name, with its TODO)
            value = (m.start(2), m.group(2)) if m.group(2) and "\n" not in m.group(2) else None
            names = [(m.start(1), m.group(1), value)]
    todo = lambda rule, at, message: port.todo(rule, at, message, above=line_start, indent="")  # noqa: E731
    for at, name, value in names:
        rename_site(port, body_start + at, name, todo, value and (body_start + value[0], value[1]))
    for m in re.finditer(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", body):
        rename_site(port, body_start + m.start(1), m.group(1), None)


def _pair_value(body: str, start: int) -> tuple[int, str] | None:
    """Where the value of ``NAME=value`` starts in ``body`` and its text (quotes kept): up to the next blank or line
    continuation, or the closing quote; None for an unclosed quote or a value with an escaped character."""
    if body[start : start + 1] in ('"', "'"):
        end = body.find(body[start], start + 1)
        return (start, body[start : end + 1]) if end > 0 else None
    end = _UNQUOTED_VALUE.match(body, start).end()  # type: ignore[union-attr]  # (it matches the empty string)
    if body[end : end + 1] == "\\" and body[end + 1 : end + 2] not in ("\n", ""):
        return None  # an escaped character inside the value: not a plain literal
    return start, body[start:end]


class DockerfileHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions):
        from ascend_port.core.porting import Ported
        from ascend_port.core.sources import decode_text

        source = decode_text(data)
        port = port_dockerfile(source.text, selection, options)
        return Ported(source, port.result(), port.findings)
