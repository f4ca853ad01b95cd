"""pip requirements and constraints files (``requirements*.txt``, ``constraints*.txt``, ``requirements/*.txt``).

The format is pip's: one requirement per logical line (``\\`` continues a line), ``#`` after whitespace starts a
comment, lines starting with ``-`` are options. Edits are line edits; every other byte stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.sources import line_offsets
from ascend_port.formats.requirement import Requirement, parse_requirement
from ascend_port.formats.textedit import Edit, TextPort, newline_of
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    explicit_target,
    torch_npu_verdict,
    verdict,
)

CUDA_TORCH_BUILD = rule(
    "NPU603",
    "cuda-torch-build",
    Confidence.LOW,
    "CUDA builds of torch (`+cu121` pins, download.pytorch.org CUDA indexes) in requirements files and `pip "
    "install` commands: TODO.",
    """
    torch_npu refuses a CUDA build of torch ("Two accelerators cannot be used at the same time"). On aarch64
    hosts the PyPI torch is the CPU build; on x86_64 use https://download.pytorch.org/whl/cpu. The line is kept.
    The same in `pip install` commands (and `conda install` of a CUDA pytorch) in shell scripts, Dockerfile `RUN`
    and Makefile recipes, in Poetry sources and dependencies (`source = "pytorch-cu121"`), and in conda
    environment files (a CUDA build of `pytorch`: install torch and torch-npu with pip instead, torch-npu has no
    conda package).

    Before:
        --extra-index-url https://download.pytorch.org/whl/cu121
    After:
        # TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch ...
        --extra-index-url https://download.pytorch.org/whl/cu121
    """,
    example_file="requirements.txt",
)

_COMMENT = re.compile(r"(^|\s+)#.*$")
_OPTION_IN_LINE = re.compile(r"\s+--?[A-Za-z]")
_INDEX_OPTION = re.compile(r"^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links)[\s=]+(\S+)")
CUDA_INDEX = re.compile(r"download\.pytorch\.org/whl/(?:(?:nightly|test)/)?cu\d+|/cu\d+/torch_stable\.html")
CUDA_LOCAL = re.compile(r"\+cu\d+")
_TORCH_FAMILY = {"torch", "torchvision", "torchaudio"}
CPU_BUILD = "torch_npu needs the CPU build of torch (PyPI's on aarch64, https://download.pytorch.org/whl/cpu on x86_64)"


@dataclass
class _Logical:
    first: int  # index of the first physical line
    last: int  # index of the last physical line (continuations)
    requirement: Requirement | None
    hashed: bool


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _logical_lines(lines: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        first = i
        while i + 1 < len(lines) and _content(lines[i]).endswith("\\") and not _COMMENT.match(_content(lines[i])):
            i += 1
        spans.append((first, i))
        i += 1
    return spans


def port_requirements(text: str, selection: Selection, target: str | None = None) -> TextPort:
    """``target``: the torch-npu release the user set (NPU602 pins it; see torch_npu_verdict)."""
    port = TextPort(text, selection)
    lines = text.splitlines(keepends=True)
    offsets = line_offsets(lines)
    newline = newline_of(text)
    logical = _requirement_lines(port, lines, offsets)
    # Hashes pin the exact files of every requirement: a new or renamed one cannot be installed until re-locked.
    hash_mode = any(item.hashed for item in logical)
    for item in logical:
        _port_requirement(port, lines, offsets, item, hash_mode, newline)
    _add_torch_npu(port, lines, offsets, logical, hash_mode, newline, target)
    return port


def _requirement_lines(port: TextPort, lines: list[str], offsets: list[int]) -> list[_Logical]:
    """The logical lines that are requirements (parsed or not); a TODO for each option naming a CUDA wheel index."""
    logical: list[_Logical] = []
    for first, last in _logical_lines(lines):
        head = _content(lines[first])
        stripped = head.strip()
        if not stripped or stripped.startswith("#"):
            continue
        whole = " ".join(_content(lines[i]).rstrip("\\") for i in range(first, last + 1))
        hashed = "--hash" in whole
        if stripped.startswith("-"):
            index = _INDEX_OPTION.match(head)
            if index and CUDA_INDEX.search(index.group(1)):
                port.todo(CUDA_TORCH_BUILD, offsets[first], f"CUDA wheel index: {CPU_BUILD}")
            continue
        req_text = _COMMENT.sub("", head.rstrip("\\"))
        option = _OPTION_IN_LINE.search(req_text)
        if option:
            req_text = req_text[: option.start()]
        logical.append(_Logical(first, last, parse_requirement(req_text), hashed))
    return logical


def _port_requirement(
    port: TextPort, lines: list[str], offsets: list[int], item: _Logical, hash_mode: bool, newline: str
) -> None:
    """NPU603 for a CUDA build of torch, NPU600 (comment out) and NPU601 (triton -> triton-ascend) for one line."""
    req = item.requirement
    if req is None:
        return
    start = offsets[item.first]
    if req.key in _TORCH_FAMILY and CUDA_LOCAL.search(req.specifier):
        port.todo(CUDA_TORCH_BUILD, start, f"{req.name}{req.specifier} is a CUDA build: {CPU_BUILD}")
    found = verdict(req)
    if found is None:
        return
    if found.rule is CUDA_ONLY_DEPENDENCY:
        port.fix(
            found.rule,
            start,
            _comment_out(lines, offsets, item, found.reason, newline),
            f"{req.name} removed: {found.reason}",
        )
    elif found.rule is TRITON_ASCEND_DEPENDENCY:
        if hash_mode:
            port.report(found.rule, start, "hash-checking file: replace triton with triton-ascend when re-locking")
            return
        end_of_content = start + len(_content(lines[item.first]))
        edits = [Edit(start + req.name_start, start + req.spec_end, found.new_requirement)]
        note = f"ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {found.reason}"
        if item.first == item.last:
            edits.append(Edit(end_of_content, end_of_content, f"  # {note}"))
        else:
            edits.append(Edit(start, start, f"# {note}{newline}"))
        port.fix(found.rule, start, edits, f"triton -> triton-ascend ({found.reason})")


def _add_torch_npu(
    port: TextPort,
    lines: list[str],
    offsets: list[int],
    logical: list[_Logical],
    hash_mode: bool,
    newline: str,
    target: str | None = None,
) -> None:
    """NPU602: torch-npu on a new line after torch's (or a report, when it cannot be added here)."""
    requirements = [item.requirement for item in logical if item.requirement is not None]
    placed = torch_npu_verdict(requirements, target)
    if placed is None:
        return
    torch_index, found = placed
    item = next(i for i in logical if i.requirement is requirements[torch_index])
    start = offsets[item.first]
    if found.conflict:
        port.report(TORCH_NPU_DEPENDENCY, start, found.conflict)
    if not found.new_requirement:
        port.todo(TORCH_NPU_DEPENDENCY, start, found.reason)  # (in the file: the next reader must choose a pair)
    elif hash_mode:
        port.report(
            TORCH_NPU_DEPENDENCY,
            start,
            f"hash-checking file: add {found.new_requirement} with its hashes when re-locking",
        )
    else:
        torch = requirements[torch_index]
        lead = _content(lines[item.first])[: torch.name_start]
        new_line = (
            f"{lead}{found.new_requirement}{torch.marker}  # added by ascend-port {TORCH_NPU_DEPENDENCY.id}: "
            f"{found.reason}"
        )
        after = offsets[item.last + 1]
        if lines[item.last].endswith(("\n", "\r")):
            edit = Edit(after, after, new_line + newline)
        else:
            edit = Edit(after, after, newline + new_line)
        port.fix(TORCH_NPU_DEPENDENCY, start, [edit], f"{found.new_requirement} added ({found.reason})")


def _comment_out(lines: list[str], offsets: list[int], item: _Logical, reason: str, newline: str) -> list[Edit]:
    note = f"removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {reason}"
    if item.first == item.last:
        line = _content(lines[item.first])
        body = line.lstrip()
        lead = line[: len(line) - len(body)]
        start = offsets[item.first]
        return [Edit(start, start + len(line), f"{lead}# {body}  # {note}")]
    edits = [Edit(offsets[item.first], offsets[item.first], f"# {note}{newline}")]
    for i in range(item.first, item.last + 1):
        edits.append(Edit(offsets[i], offsets[i], "# "))
    return edits


class RequirementsHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions):
        from ascend_port.core.porting import Ported
        from ascend_port.core.sources import decode_text

        source = decode_text(data)
        port = port_requirements(source.text, selection, explicit_target(options))
        return Ported(source, port.result(), port.findings)
