"""Edits of a bracketed list of requirement strings, the same in TOML arrays (pyproject.toml) and Python lists
(setup.py): both have quoted items, commas, and ``#`` comments on their own lines.

An item alone on its line is commented out there, with the reason; an item sharing its line is cut out and the
reason goes on a comment line above the statement. Callers verify the result with the format's own parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_port.formats.textedit import Edit, TextPort, newline_of
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    Requirement,
    parse_requirement,
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
    raw = text[item.start:item.end]
    if len(raw) < 2 or raw[0] not in "\"'" or raw[-1] != raw[0] or "\\" in raw or raw[1:-1] != item.value:
        return None
    return raw[0], raw[1:-1], raw[-1]


class _Layout:
    """Where an item sits on its line."""

    def __init__(self, text: str, item: ListItem) -> None:
        self.line_start = text.rfind("\n", 0, item.start) + 1
        end = text.find("\n", item.end)
        self.line_end = len(text) if end < 0 else (end - 1 if end > 0 and text[end - 1] == "\r" else end)
        before = text[self.line_start:item.start]
        after = text[item.end:self.line_end].lstrip(" \t")
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


def edit_list(port: TextPort, req_list: RequirementList) -> Change | None:
    """Record the edits and findings for one list; returns what they do to its values (None: nothing)."""
    text = port.text
    items = req_list.items
    newline = newline_of(text)
    parsed: list[Requirement | None] = [parse_requirement(item.value) for item in items]
    layouts = [_Layout(text, item) for item in items]
    removed: set[int] = set()
    replaced: dict[int, str] = {}
    inserted: tuple[int, str] | None = None
    notes: list[str] = []  # comment lines for the statement (items that share their line)
    edits: list[tuple[object, int, list[Edit], str]] = []
    cuts: dict[int, list[Edit]] = {}  # item index -> its cut (for items sharing their line)

    def above(note: str) -> None:
        notes.append(note)

    for i, (item, req) in enumerate(zip(items, parsed)):
        found = verdict(req) if req is not None else None
        if found is None or not port.enabled(found.rule):
            continue
        layout = layouts[i]
        if found.rule is CUDA_ONLY_DEPENDENCY:
            note = f"removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {found.reason}"
            if layout.alone:
                body = text[item.start:layout.line_end]
                change = [Edit(item.start, layout.line_end, f"# {body}  # {note}")]
            else:
                change = [_cut(text, items, layouts, i, removed, cuts)]
                cuts[i] = change
                above(f"# {text[item.start:item.end]} {note}")
            removed.add(i)
            edits.append((found.rule, item.start, change, f"{req.name} removed from {req_list.where}: {found.reason}"))
        elif found.rule is TRITON_ASCEND_DEPENDENCY:
            parts = _token_parts(text, item)
            if parts is None:
                port.report(found.rule, item.start, "replace triton with triton-ascend by hand (escaped string)")
                continue
            quote, inner, close = parts
            new_value = found.new_requirement + req.marker
            change = [Edit(item.start, item.end, quote + new_value + close)]
            if layout.alone:
                change.append(Edit(layout.line_end, layout.line_end, f"  # ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {found.reason}"))
            else:
                above(f"# ascend-port {TRITON_ASCEND_DEPENDENCY.id}: triton-ascend {found.reason}")
            replaced[i] = new_value
            edits.append((found.rule, item.start, change, f"triton -> triton-ascend in {req_list.where}"))

    requirements = [r for r in parsed if r is not None]
    placed = torch_npu_verdict(requirements) if port.enabled(TORCH_NPU_DEPENDENCY) else None
    if placed is not None:
        index = parsed.index(requirements[placed[0]])
        found = placed[1]
        item, layout, torch = items[index], layouts[index], parsed[index]
        parts = _token_parts(text, item)
        if not found.new_requirement or parts is None:
            port.report(TORCH_NPU_DEPENDENCY, item.start, found.reason if not found.new_requirement
                        else "add torch-npu by hand (escaped string)")
        else:
            quote, inner, close = parts
            new_value = found.new_requirement + torch.marker
            token = quote + new_value + close
            if layout.alone:
                if layout.has_comma:
                    change = [Edit(layout.line_end, layout.line_end, f"{newline}{layout.indent}{token},")]
                else:
                    change = [Edit(item.end, item.end, ","),
                              Edit(layout.line_end, layout.line_end, f"{newline}{layout.indent}{token}")]
            else:
                change = [Edit(item.end, item.end, f", {token}")]
            inserted = (index, new_value)
            edits.append((TORCH_NPU_DEPENDENCY, item.start, change,
                          f"{found.new_requirement} added to {req_list.where} ({found.reason})"))

    if not edits:
        return None
    all_edits = [e for _, _, change, _ in edits for e in change]
    if notes:
        start = req_list.statement_start
        indent = text[start:start + len(text[start:]) - len(text[start:].lstrip(" \t"))]
        all_edits.append(Edit(start, start, "".join(f"{indent}{note}{newline}" for note in notes)))
    if _overlap(all_edits):
        for rule, offset, _, message in edits:
            port.report(rule, offset, f"{message}: the list is laid out too unusually to edit safely; do it by hand")
        return None
    for rule, offset, change, message in edits:
        port.fix(rule, offset, change, message)
    if notes:
        port.edits.append(all_edits[-1])
    return Change(frozenset(removed), replaced, inserted)


def _cut(text: str, items: tuple[ListItem, ...], layouts: list[_Layout], i: int, removed: set[int],
         cuts: dict[int, list[Edit]]) -> Edit:
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
