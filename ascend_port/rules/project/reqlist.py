"""Edits of a bracketed list of requirement strings, the same in TOML arrays (pyproject.toml) and Python lists
(setup.py): both have quoted items, commas, and ``#`` comments on their own lines.

An item alone on its line is commented out there, with the reason; an item sharing its line is cut out and the
reason goes on a comment line above the statement. Callers verify the result with the format's own parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_port.core.catalogue import Rule
from ascend_port.formats.requirement import Requirement, parse_requirement
from ascend_port.formats.textedit import Edit, TextPort, newline_of
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    Verdict,
    torch_npu_verdict,
    verdict,
)


@dataclass(frozen=True)
class ListItem:
    start: int  # span of the string token, quotes included
    end: int
    value: str  # the decoded string


@dataclass(frozen=True)
class RequirementList:
    where: str  # for messages: "dependencies", "optional-dependencies.cuda", "install_requires"
    items: tuple[ListItem, ...]
    statement_start: int  # offset of the first line of the statement holding the list (comments go above it)


@dataclass(frozen=True)
class Change:
    """What the edits do to the list's values, for the caller's verification."""

    removed: frozenset[int]  # item indexes
    replaced: dict  # item index -> new value
    inserted_after: tuple[int, str] | None  # (item index, new value)

    def apply(self, values: list[str]) -> list[str]:
        out: list[str] = []
        for i, value in enumerate(values):
            if i not in self.removed:
                out.append(self.replaced.get(i, value))
            if self.inserted_after and self.inserted_after[0] == i:
                out.append(self.inserted_after[1])
        return out


def _token_parts(text: str, item: ListItem) -> tuple[str, str, str] | None:
    """(opening quote, raw inner text, closing quote) for a plain one-character-quoted token without escapes."""
    raw = text[item.start : item.end]
    if len(raw) < 2 or raw[0] not in "\"'" or raw[-1] != raw[0] or "\\" in raw or raw[1:-1] != item.value:
        return None
    return raw[0], raw[1:-1], raw[-1]


class _Layout:
    """Where an item sits on its line."""

    def __init__(self, text: str, item: ListItem) -> None:
        self.line_start = text.rfind("\n", 0, item.start) + 1
        end = text.find("\n", item.end)
        self.line_end = len(text) if end < 0 else (end - 1 if end > 0 and text[end - 1] == "\r" else end)
        before = text[self.line_start : item.start]
        after = text[item.end : self.line_end].lstrip(" \t")
        self.has_comma = after.startswith(",")
        rest = after[1:].lstrip(" \t") if self.has_comma else after
        self.alone = not before.strip() and (not rest or rest.startswith("#"))
        self.indent = before
        # End of the item and its comma (and the blanks after it) on the same line, for cutting it out.
        cut = item.end
        while cut < self.line_end and text[cut] in " \t":
            cut += 1
        if cut < self.line_end and text[cut] == ",":
            cut += 1
            while cut < self.line_end and text[cut] in " \t":
                cut += 1
        self.cut_end = cut if self.has_comma else item.end


def edit_list(
    port: TextPort, req_list: RequirementList, *, add_torch_npu: bool = True, port_items: bool = True
) -> Change | None:
    """Record the edits and findings for one list; returns what they do to its values (None: nothing).
    ``add_torch_npu``: torch-npu goes beside torch in this list; ``port_items``: CUDA-only requirements go and
    triton becomes triton-ascend (not in an extra that other hosts opt into: it keeps what they install)."""
    editor = _ListEditor(port, req_list)
    if port_items:
        for i, req in enumerate(editor.parsed):
            editor.port_item(i, req)
    if add_torch_npu:
        editor.add_torch_npu()
    return editor.record()


class _ListEditor:
    """The edits of one list, gathered first and recorded together at the end: all of them, or (when they overlap)
    none, with findings instead."""

    def __init__(self, port: TextPort, req_list: RequirementList) -> None:
        self.port, self.req_list = port, req_list
        self.text = port.text
        self.items = req_list.items
        self.newline = newline_of(self.text)
        self.parsed: list[Requirement | None] = [parse_requirement(item.value) for item in self.items]
        self.layouts = [_Layout(self.text, item) for item in self.items]
        self.removed: set[int] = set()
        self.replaced: dict[int, str] = {}
        self.inserted: tuple[int, str] | None = None
        self.notes: list[str] = []  # comment lines for the statement (items that share their line)
        self.edits: list[tuple[Rule, int, list[Edit], str]] = []  # (rule, offset, change, message)
        self.cuts: dict[int, list[Edit]] = {}  # item index -> its cut (for items sharing their line)

    def port_item(self, i: int, req: Requirement | None) -> None:
        if req is None:
            return
        found = verdict(req)
        if found is None or not self.port.enabled(found.rule):
            return
        if found.rule is CUDA_ONLY_DEPENDENCY:
            self.remove(i, req, found)
        elif found.rule is TRITON_ASCEND_DEPENDENCY:
            self.replace_triton(i, req, found)

    def remove(self, i: int, req: Requirement, found: Verdict) -> None:
        """A CUDA-only item: commented out on its own line, else cut out with the note above the statement."""
        text, item, layout = self.text, self.items[i], self.layouts[i]
        note = f"removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {found.reason}"
        if layout.alone:
            body = text[item.start : layout.line_end]
            change = [Edit(item.start, layout.line_end, f"# {body}  # {note}")]
        else:
            change = [_cut(text, self.items, self.layouts, i, self.removed, self.cuts)]
            self.cuts[i] = change  # the same list as in self.edits: a later cut may empty it (see _cut)
            self.notes.append(f"# {text[item.start : item.end]} {note}")
        self.removed.add(i)
        self.edits.append(
            (found.rule, item.start, change, f"{req.name} removed from {self.req_list.where}: {found.reason}")
        )

    def replace_triton(self, i: int, req: Requirement, found: Verdict) -> None:
        item, layout = self.items[i], self.layouts[i]
        parts = _token_parts(self.text, item)
        if parts is None:
            self.port.report(found.rule, item.start, "replace triton with triton-ascend by hand (escaped string)")
            return
        quote, inner, close = parts
        new_value = found.new_requirement + req.marker
        change = [Edit(item.start, item.end, quote + new_value + close)]
        if layout.alone:
            change.append(
                Edit(layout.line_end, layout.line_end, f"  # ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {found.reason}")
            )
        else:
            self.notes.append(f"# ascend-port {TRITON_ASCEND_DEPENDENCY.id}: triton-ascend {found.reason}")
        self.replaced[i] = new_value
        self.edits.append((found.rule, item.start, change, f"triton -> triton-ascend in {self.req_list.where}"))

    def add_torch_npu(self) -> None:
        """torch-npu after the torch requirement whose version it follows (a finding only, where it cannot be)."""
        requirements = [r for r in self.parsed if r is not None]
        placed = torch_npu_verdict(requirements) if self.port.enabled(TORCH_NPU_DEPENDENCY) else None
        if placed is None:
            return
        index = self.parsed.index(requirements[placed[0]])
        found = placed[1]
        item, layout, torch = self.items[index], self.layouts[index], requirements[placed[0]]
        parts = _token_parts(self.text, item)
        if not found.new_requirement or parts is None:
            self.port.report(
                TORCH_NPU_DEPENDENCY,
                item.start,
                found.reason if not found.new_requirement else "add torch-npu by hand (escaped string)",
            )
            return
        quote, inner, close = parts
        new_value = found.new_requirement + torch.marker
        change = self._insertion(item, layout, quote + new_value + close)
        self.inserted = (index, new_value)
        self.edits.append(
            (
                TORCH_NPU_DEPENDENCY,
                item.start,
                change,
                f"{found.new_requirement} added to {self.req_list.where} ({found.reason})",
            )
        )

    def _insertion(self, item: ListItem, layout: _Layout, token: str) -> list[Edit]:
        """``token`` as a new item after ``item``: on a line of its own when ``item`` has one, else on its line."""
        if not layout.alone:
            return [Edit(item.end, item.end, f", {token}")]
        if layout.has_comma:
            return [Edit(layout.line_end, layout.line_end, f"{self.newline}{layout.indent}{token},")]
        return [
            Edit(item.end, item.end, ","),
            Edit(layout.line_end, layout.line_end, f"{self.newline}{layout.indent}{token}"),
        ]

    def record(self) -> Change | None:
        if not self.edits:
            return None
        text, port = self.text, self.port
        all_edits = [e for _, _, change, _ in self.edits for e in change]
        if self.notes:
            start = self.req_list.statement_start
            indent = text[start : start + len(text[start:]) - len(text[start:].lstrip(" \t"))]
            all_edits.append(Edit(start, start, "".join(f"{indent}{note}{self.newline}" for note in self.notes)))
        if _overlap(all_edits):
            for rule, offset, _, message in self.edits:
                port.report(
                    rule, offset, f"{message}: the list is laid out too unusually to edit safely; do it by hand"
                )
            return None
        applied = [port.fix(rule, offset, change, message) for rule, offset, change, message in self.edits]
        if self.notes and any(applied):  # (not for a list whose every change a `# ascend-port: ignore` suppressed)
            port.edits.append(all_edits[-1])
        return Change(frozenset(self.removed), self.replaced, self.inserted)


def _cut(
    text: str,
    items: tuple[ListItem, ...],
    layouts: list[_Layout],
    i: int,
    removed: set[int],
    cuts: dict[int, list[Edit]],
) -> Edit:
    """Cut item ``i`` out of a line it shares: with its comma, or (last item, no comma) together with everything
    back to the end of the last item kept (the cuts of removed items in between are then part of this one)."""
    item, layout = items[i], layouts[i]
    if layout.has_comma:
        return Edit(item.start, layout.cut_end, "")
    previous = i - 1
    while previous >= 0 and previous in removed:
        previous -= 1
    for j in range(previous + 1, i):
        if j in cuts:
            cuts[j].clear()
    if previous < 0:
        first = min([i, *(j for j in range(i) if j in cuts)])
        return Edit(items[first].start, item.end, "")
    return Edit(items[previous].end, item.end, "")


def _overlap(edits: list[Edit]) -> bool:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    return any(b.start < a.end for a, b in zip(ordered, ordered[1:]))
