"""Where a module's triple-quoted strings are, without parsing it: a trigger inside one needs nothing ported.

Library code repeats its usage examples in docstrings and doc constants (``>>> pipe.to("cuda")``): in a corpus such
as diffusers, half the files that contain a trigger contain it only there, and Python's ``ast`` parse of those files
would cost more than all the rest of their port. No rule rewrites the text of a multi-line string, so such
matches are dropped before any parsing.

Telling a string from code needs a tokenizer; this finds only the ``\"\"\"`` and ``'''`` delimiters, and gives up
(None: every match counts, the module is parsed as usual) on any line where a delimiter could be something else:
a line that also holds a comment sign, another quote character or a backslash before the delimiter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DELIMITER = re.compile(r'"""|\'\'\'')


def triple_quoted_spans(text: str) -> list[tuple[int, int]] | None:
    """(start, end) offsets of the triple-quoted strings, delimiters included; None when unsure."""
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None  # (offset, delimiter) of the string being read
    checked_line = -1
    for match in _DELIMITER.finditer(text):
        at, delimiter = match.start(), match.group()
        if opened is not None and delimiter != opened[1]:
            continue  # the other kind of delimiter, inside a string: text
        line_start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
        if line_start != checked_line:
            checked_line = line_start
            if not _plain_delimiter_line(text, line_start):
                return None
        if opened is None:
            opened = (at, delimiter)
        else:
            spans.append((opened[0], match.end()))
            opened = None
    return None if opened is not None else spans


def _plain_delimiter_line(text: str, start: int) -> bool:
    """A line whose quote characters are all in its triple delimiters, with no comment sign and no backslash
    before a delimiter: there the delimiters can only open and close strings."""
    end = min(i for i in (text.find("\n", start), text.find("\r", start), len(text)) if i >= 0)
    line = text[start:end]
    if "#" in line or '\\"""' in line or "\\'''" in line:
        return False
    rest = _DELIMITER.sub("", line)
    return '"' not in rest and "'" not in rest


def inside(spans: Sequence[tuple[int, int]], offset: int) -> bool:
    """Is ``offset`` inside one of ``spans`` (sorted, disjoint)?"""
    low, high = 0, len(spans)
    while low < high:
        middle = (low + high) // 2
        if spans[middle][1] <= offset:
            low = middle + 1
        else:
            high = middle
    return low < len(spans) and spans[low][0] <= offset
