"""A fast prefilter for the transformers' trigger patterns: the literal text each pattern cannot match without.

Python's ``re`` scans an alternation of dozens of patterns position by position (a pattern that starts with ``\\b``
defeats its literal-prefix search), which costs seconds over a million lines. Most files contain none of the
triggers, and ``str``'s substring search is an order of magnitude faster: so each trigger fragment is reduced to a
set of lower-case strings one of which every match must contain (``\\bgraph\\b`` -> ``{"graph"}``,
``[Cc][Uu][Dd][Aa]`` -> ``{"cuda"}``, ``nccl|NCCL`` -> ``{"nccl"}``), and only the fragments whose strings occur in
the lower-cased file are compiled into the patterns that are then run. A fragment this cannot reduce is always
kept, so the result is exactly what the full patterns would find.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Hashable, Iterable, Sequence

try:  # the parser of the re module (``sre_parse`` before Python 3.11)
    from re import _parser as sre_parse  # type: ignore[attr-defined]
    from re import _constants as sre_constants  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

_LITERAL = sre_constants.LITERAL
_IN = sre_constants.IN
_SUBPATTERN = sre_constants.SUBPATTERN
_BRANCH = sre_constants.BRANCH
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT)
_ZERO_WIDTH = (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT)
MIN_LENGTH = 3  # a shorter string occurs in most files and filters nothing


def required_strings(fragment: str) -> frozenset[str] | None:
    """Lower-case strings one of which every match of ``fragment`` contains, or None when that cannot be said."""
    try:
        found = _sequence(sre_parse.parse(fragment))
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    if not found or min(map(len, found)) < MIN_LENGTH:
        return None
    return frozenset(found)


def _char(item) -> str | None:
    """The lower-case character an item matches, when it matches one letter in either case (``c``, ``[Cc]``)."""
    op, arg = item
    if op is _LITERAL:
        return chr(arg).lower()
    if op is _IN and arg and all(o is _LITERAL for o, _ in arg):
        chars = {chr(a).lower() for _, a in arg}
        return chars.pop() if len(chars) == 1 else None
    return None


def _sequence(items) -> set[str] | None:
    """The best candidate of a sequence: its longest run of literal characters, or a required set of a group."""
    candidates: list[set[str]] = []
    run = ""
    for item in items:
        op, arg = item
        char = _char(item)
        if char is not None:
            run += char
            continue
        if op in _ZERO_WIDTH:
            continue  # matches no character: the characters around it are still adjacent in the text
        if run:
            candidates.append({run})
            run = ""
        inner: set[str] | None = None
        if op is _SUBPATTERN:
            inner = _sequence(arg[-1])
        elif op is _BRANCH:
            inner = set()
            for branch in arg[1]:
                found = _sequence(branch)
                if found is None:
                    inner = None
                    break
                inner |= found
        elif op in _REPEATS and arg[0] >= 1:
            inner = _sequence(arg[2])
        if inner:
            candidates.append(inner)
    if run:
        candidates.append({run})
    if not candidates:
        return None
    return max(candidates, key=lambda strings: (min(map(len, strings)), -len(strings)))


class TriggerFilter:
    """Picks, for one text, the trigger fragments that can match, and gives the patterns to run on it."""

    def __init__(self, by_scope: Iterable[tuple[Hashable, Sequence[str]]]) -> None:
        self._fragments = [(scope, fragment, required_strings(fragment))
                           for scope, fragments in by_scope for fragment in fragments]

    def patterns(self, text: str) -> tuple[tuple[re.Pattern[str], Hashable], ...]:
        """(pattern, scope) pairs over the fragments that can match ``text``; empty when none can."""
        lowered = text.lower()
        present = tuple((scope, fragment) for scope, fragment, strings in self._fragments
                        if strings is None or any(s in lowered for s in strings))
        return _compiled(present) if present else ()


@lru_cache(maxsize=512)
def _compiled(present: tuple[tuple[Hashable, str], ...]) -> tuple[tuple[re.Pattern[str], Hashable], ...]:
    by_scope: dict[Hashable, list[str]] = {}
    for scope, fragment in present:
        by_scope.setdefault(scope, []).append(fragment)
    return tuple((re.compile("|".join(f"(?:{f})" for f in fragments)), scope)
                 for scope, fragments in by_scope.items())
