"""NPU190: the final check of every port: each ``torch_npu.*`` / ``torch.npu.*`` name of the ported module exists in
the target torch-npu release (``--torch-npu``; core/npu_api.py). A name the target lacks gets a TODO, so that a
port never leaves code that fails under the project's own pins without saying so. ``ascend-port check-api`` runs
the same check alone on a project that is already ported.
"""

from __future__ import annotations

import ast
import difflib
import unicodedata
from collections.abc import Callable

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import TODO_PREFIX, Finding, todo_comment
from ascend_port.python.api_names import missing_names
from ascend_port.python.names import is_word_character
from ascend_port.python.transformer import ALL_OTHERS, PortContext, PortTransformer

API_MISSING = rule(
    "NPU190",
    "api-missing-in-target",
    Confidence.LOW,
    "A `torch_npu`/`torch.npu` name in the ported module that the target torch-npu release lacks gets a TODO.",
    """
    The rules emit only what the target release has (`--torch-npu VERSION`, `[tool.ascend-port] torch-npu`, else
    the release for the project's own torch pin, else the newest). This last check reads every `torch_npu.*` and
    `torch.npu.*` name of each ported module, resolved through its imports, and looks it up in the target's API
    inventory: one it lacks (written by hand, or brought by a newer release) gets a TODO naming the releases that
    have it. Only what the inventory can judge is flagged: a class member its definition lacks, a listed name
    (`__all__` of torch.npu, the documented ops) that came after the target; undocumented ops, private names and
    public names no `__all__` lists pass. The port checks the modules it changes; `ascend-port check-api PATH
    --torch-npu VERSION` checks every module, for CI.

    Before:
        import torch
        torch.cuda.synchronize()
        with torch.npu.mstx.range("step"):
            model(batch)
    After:
        import torch
        torch.npu.synchronize()
        # TODO(ascend-port): NPU190 [low] torch.npu.mstx.range is missing from torch_npu 2.14.0 ...
        with torch.npu.mstx.range("step"):
            model(batch)
    """,
    follows=("ALL",),
)


def _holds_any(text: str, words: frozenset[str]) -> bool:
    """Does one of ``words`` appear in ``text`` as an identifier (as Python reads it, NFKC: ``ﬁle`` is ``file``)
    where an API name's part can be: after a dot (``torch.npu.Stream``), or in an import's list of names (after
    ``import``, a comma or a bracket)? Each occurrence is looked at where it is (``graph`` in ``paragraph``, or in
    ``a CUDA graph`` is none): the text is not split into words."""
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    for word in words:
        at = text.find(word)
        while at >= 0:
            if _is_identifier_at(text, at, at + len(word)) and _after_dot_or_in_import(text, at):
                return True
            at = text.find(word, at + 1)
    return False


def _after_dot_or_in_import(text: str, start: int) -> bool:
    """Is what precedes ``start`` (blanks, line breaks and continuations aside) a dot, a comma, an opening bracket
    or the keyword ``import``?"""
    at = start
    while at and text[at - 1] in " \t\r\n\\":
        at -= 1
    if at and text[at - 1] in ".,(":
        return True
    return text.endswith("import", 0, at) and (at == 6 or not is_word_character(text[at - 7]))


def _is_identifier_at(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` a whole identifier: a run of word characters less the digits it starts with?"""
    if end < len(text) and is_word_character(text[end]):
        return False
    run = start
    while run and is_word_character(text[run - 1]):
        run -= 1
    return run == start or text[run:start].isdecimal()


def _statement_starts(tree: ast.Module) -> dict[int, tuple[int, int]]:
    """line -> (first line, column) of the innermost statement that holds it (decorators included)."""
    starts: dict[int, tuple[int, int]] = {}  # (the innermost: the one that starts last)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.end_lineno is not None:
            decorators = getattr(node, "decorator_list", [])
            first = min([node.lineno, *(d.lineno for d in decorators)])
            for line in range(first, node.end_lineno + 1):
                if line not in starts or starts[line][0] <= first:
                    starts[line] = (first, node.col_offset)
    return starts


def _tail(name: str) -> str:
    """``mstx.range_push`` of ``torch_npu.npu.mstx.range_push`` and ``torch.npu.mstx.range_push`` alike."""
    for prefix in ("torch_npu.npu.", "torch.npu.", "torch_npu."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _old_line(new_line: int, matcher: difflib.SequenceMatcher) -> int:
    """The original's line (1-based) for a line of the ported text: itself where unchanged, else the start of the
    original block it replaces (findings give lines of the original)."""
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        if j1 <= new_line - 1 < max(j2, j1 + 1):
            return i1 + 1 + (new_line - 1 - j1 if tag == "equal" else 0)
    return new_line


class TargetApiTransformer(PortTransformer):
    """NPU190: only a file-level step (``finish``) on the ported text."""

    # Its file-level step checks what all the others wrote.
    RUNS_AFTER = (ALL_OTHERS, "KernelTransformer", "MultiDeviceTransformer")
    RULES = (API_MISSING,)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if not ctx.selection.enabled(API_MISSING) or ("npu" not in text) or text == ctx.source:
            return text  # (the port checks what it changes; `check-api` checks the rest)
        version = npu_api.target_version(ctx.options)
        if not _holds_any(text, npu_api.flaggable_words(version)):
            return text  # (no name the release could lack: the ported module is not parsed for the check)
        missing = missing_names(tree(), version, text)
        if not missing:
            return text
        lines = text.splitlines(keepends=True)
        starts = _statement_starts(tree())
        inserts: dict[int, list[str]] = {}
        matcher = difflib.SequenceMatcher(None, ctx.source.splitlines(), text.splitlines(), autojunk=False)
        for name, message in missing:
            first = starts.get(name.line, (name.line, 0))[0]
            above = _comments_above(lines, first)
            if (
                any(_tail(name.name) in comment for comment in above)
                or first in inserts
                and message in "".join(inserts[first])
            ):
                continue  # (a rule's own TODO already says it, or this one is there)
            if ctx.suppressed(API_MISSING, line=_old_line(first, matcher)):
                continue  # (a `# ascend-port: ignore` comment on the statement)
            reports_only = ctx.reports_only()
            ctx.findings.append(Finding(API_MISSING, _old_line(first, matcher), message, applied=not reports_only))
            if not reports_only:
                newline = "\r\n" if lines[first - 1].endswith("\r\n") else "\n"
                indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
                inserts.setdefault(first, []).append(indent + todo_comment(API_MISSING, message) + newline)
        for first in sorted(inserts, reverse=True):
            lines[first - 1 : first - 1] = inserts[first]
        return "".join(lines)


def _comments_above(lines: list[str], first: int) -> list[str]:
    """The TODO comments right above line ``first`` (1-based)."""
    out = []
    index = first - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        if TODO_PREFIX in lines[index]:
            out.append(lines[index])
        index -= 1
    return out
