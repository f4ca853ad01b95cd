"""Finding the transformers' trigger matches fast: the literal text each pattern cannot match without.

Python's ``re`` scans an alternation of dozens of patterns position by position (a pattern that starts with ``\\b``
defeats its literal-prefix search), which costs seconds over a million lines, and ``str``'s substring search is an
order of magnitude faster. So each trigger fragment is reduced to a set of lower-case strings one of which every
match must contain (``\\bgraph\\b`` -> ``{"graph"}``, ``[Cc][Uu][Dd][Aa]`` -> ``{"cuda"}``, ``nccl|NCCL`` ->
``{"nccl"}``). A fragment runs only on a text that contains one of its strings, and one that cannot cross a line
only on the lines that contain them. A fragment this cannot reduce runs on every text, so the result is exactly
what each fragment run over the whole text would find.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from ascend_port.python.names import is_word_character
from ascend_port.python.scopes import Trigger

try:  # the parser of the re module (``sre_parse`` before Python 3.11)
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
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


def _parsed(fragment: str):
    """The ``re`` module's parse of ``fragment``, or None when it cannot be read."""
    try:
        return sre_parse.parse(fragment)
    except (re.error, RecursionError, TypeError, ValueError):
        return None


def required_strings(fragment: str) -> frozenset[str] | None:
    """Lower-case strings one of which every match of ``fragment`` contains, or None when that cannot be said."""
    parsed = _parsed(fragment)
    found = _sequence(parsed) if parsed is not None else None
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


def line_local(fragment: str) -> bool:
    """True when no match of ``fragment`` can contain or look past a line break: its matches in a text are its
    matches in the lines on their own (``^``/``$`` and friends, which would see a line's end as the text's end,
    count as looking past it)."""
    parsed = _parsed(fragment)
    if parsed is None:
        return False
    flags = getattr(getattr(parsed, "state", None), "flags", None)
    if flags is None:  # pragma: no cover - Python 3.10's sre_parse
        flags = parsed.pattern.flags
    return not flags & re.DOTALL and not _newline_possible(parsed)


def _newline_possible(items) -> bool:
    for op, arg in items:
        if op is _LITERAL:
            if arg == 10:
                return True
        elif op is sre_constants.NOT_LITERAL:
            if arg != 10:
                return True
        elif op is _IN:
            if _set_has_newline(arg):
                return True
        elif op is sre_constants.ANY:
            continue  # `.` without DOTALL (checked by the caller)
        elif op is sre_constants.AT:
            if arg not in (sre_constants.AT_BOUNDARY, sre_constants.AT_NON_BOUNDARY):
                return True
        elif op is _SUBPATTERN:
            if _newline_possible(arg[-1]):
                return True
        elif op is _BRANCH:
            if any(_newline_possible(branch) for branch in arg[1]):
                return True
        elif op in _REPEATS:
            if _newline_possible(arg[2]):
                return True
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if _newline_possible(arg[1]):
                return True
        else:
            return True  # anything else (a back reference, a conditional): assume it can
    return False


def _set_has_newline(items) -> bool:
    negated = any(op is sre_constants.NEGATE for op, _ in items)
    has = False
    for op, arg in items:
        if op is _LITERAL and arg == 10 or op is sre_constants.RANGE and arg[0] <= 10 <= arg[1]:
            has = True
        elif op is sre_constants.CATEGORY and arg not in (sre_constants.CATEGORY_DIGIT, sre_constants.CATEGORY_WORD):
            has = True  # \s, \D, \W and the like: treat as containing it
    return has != negated


@dataclass(frozen=True)
class _Fragment:
    scope: Hashable
    pattern: re.Pattern[str]
    strings: frozenset[str] | None  # one of these occurs (lower-cased) in every match; None: unknown
    line_local: bool
    also: tuple[str, ...]  # lower-case strings the text must contain for its matches to count
    imports: tuple[str, ...]  # the packages one of which the text must import (Trigger.imports)
    owner: Hashable  # what the match is for (port/python.py: the transformer whose trigger it is)
    when: Callable[[str], bool] | None  # a test of the text (Trigger.when)


class TriggerFilter:
    """Finds the trigger matches of a text. A fragment whose literal strings the text does not contain is not run;
    one that cannot cross a line is run only on the lines that contain its strings (Python's ``re`` scans an
    alternation position by position, ``str.find`` is an order of magnitude faster). Matches that start on a comment
    line are dropped: no rule rewrites a comment, and a file with no other match is not even parsed.

    ``triggers``: each a Trigger, or a Trigger and its owner (None by default), which each match names."""

    def __init__(self, triggers: Iterable[Trigger | tuple[Trigger, Hashable]]) -> None:
        owned = [t if isinstance(t, tuple) else (t, None) for t in triggers]
        self._fragments = [
            _Fragment(
                t.scope,
                re.compile(t.pattern),
                required_strings(t.pattern),
                line_local(t.pattern),
                t.also,
                t.imports,
                owner,
                t.when,
            )
            for t, owner in owned
        ]
        strings = sorted({s for f in self._fragments for s in (*(f.strings or ()), *f.also)})
        # Each string is looked for through a key, a tail of it that starts at a rare character (`device_mesh` for
        # `init_device_mesh`): ``re`` tries a match at every position whose character can start one, so keys that
        # start at few characters are what make the one scan of a text fast (see _keys).
        keys = _keys(strings)
        # The keys that contain no other are all looked for in one scan of the text: a trie of them as one pattern,
        # which ``re`` runs faster than one substring search each.
        distinct = set(keys.values())
        roots = sorted(k for k in distinct if not any(other != k and other in k for other in distinct))
        self._roots = re.compile(_trie(roots)) if roots else None
        # A scan finds no match that starts inside another (``torch.double(`` hides ``.double(``): after each
        # match, the roots that can start inside it (a prefix of theirs is its suffix) are looked for there.
        self._hidden = {
            a: [(r, k) for r in roots for k in range(1, min(len(a), len(r))) if a.endswith(r[:k])] for a in roots
        }
        # Then a string is looked for (a substring search) only where every root in its key is: under each root,
        # the strings whose key holds it, with all the roots they need.
        self._by_root: dict[str, list[tuple[str, frozenset[str]]]] = {root: [] for root in roots}
        for string in strings:
            needed = frozenset(r for r in roots if r in keys[string])
            self._by_root[min(needed)].append((string, needed))
        # (a fragment without strings may match in a text that holds none: only its `also` strings rule it out)
        self._unreduced = any(f.strings is None and not f.also for f in self._fragments)

    def matches(self, text: str) -> list[tuple[int, Hashable, Hashable]]:
        """(start offset, scope, owner) of every match of every fragment, in order."""
        lowered = text.lower()
        aligned = len(lowered) == len(text)  # lower() may lengthen a few characters (İ): then offsets differ
        present = self._present(lowered)
        if not present and not self._unreduced:
            return []  # (most texts)
        found: set[tuple[int, Hashable, Hashable]] = set()
        import_lines: str | None = None
        holds: dict[Callable[[str], bool], bool] = {}
        for fragment in self._fragments:
            if fragment.also and not present.issuperset(fragment.also):
                continue
            if fragment.imports:
                if import_lines is None:
                    import_lines = _import_lines(text)
                if not _starts_a_word(import_lines, fragment.imports):
                    continue
            strings = None if fragment.strings is None else sorted(fragment.strings & present)
            if strings == []:
                continue
            if fragment.when is not None:
                if fragment.when not in holds:
                    holds[fragment.when] = fragment.when(text)
                if not holds[fragment.when]:
                    continue
            key = fragment.scope, fragment.owner
            if strings is None or not (fragment.line_local and aligned):
                found.update((m.start(), *key) for m in fragment.pattern.finditer(text))
                continue
            for start, end in _lines_with(text, lowered, strings):
                found.update((m.start(), *key) for m in fragment.pattern.finditer(text, start, end))
        return sorted((m for m in found if not _on_comment_line(text, m[0])), key=lambda item: item[0])

    def _present(self, lowered: str) -> set[str]:
        """The strings the text holds: the roots of their keys in one scan, then each string where all the roots
        of its key are."""
        roots: set[str] = set()
        if self._roots is not None:
            for match in self._roots.finditer(lowered):
                root = match.group()
                roots.add(root)
                for hidden, overlap in self._hidden[root]:
                    if lowered.startswith(hidden, match.end() - overlap):
                        roots.add(hidden)
        return {
            string
            for root in roots
            for string, needed in self._by_root[root]
            if (string == root or string in lowered) and needed <= roots
        }


_IMPORT_WORD = re.compile(r"\bimport\b")
_CONTINUED = ("\\", "\\\r")  # the end of a line that a backslash continues


def _import_lines(text: str) -> str:
    """The logical lines of ``text`` (lines joined by a backslash) that say ``import``, each cut at its first ``#``
    and joined by newlines: where Trigger.imports looks for its packages. Read from each ``import`` of the text (a
    few dozen), not from each mention of a package (``cuda``: hundreds)."""
    lines = []
    at = text.find("import")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        while start > 0 and text.endswith(_CONTINUED, 0, start - 1):
            start = text.rfind("\n", 0, start - 1) + 1  # (a continued line: its logical line starts above)
        end = text.find("\n", at)
        while end > 0 and text.endswith(_CONTINUED, 0, end):
            end = text.find("\n", end + 1)
        end = len(text) if end < 0 else end
        line = text[start:end].split("#", 1)[0]
        if _IMPORT_WORD.search(line):
            lines.append(line)
        at = text.find("import", end)
    return "\n".join(lines)


# How often each character occurs in lower-cased Python source, per mille (measured on transformers, diffusers,
# DeepSpeed, LitGPT and MMDetection); the others are rarer.
_FREQUENCY = dict(
    zip(
        'etsnioar_ldpcmufh.g,=)(b":kyvw`xz[]*-1#02',
        map(
            int,
            "78 57 47 46 46 44 41 36 29 28 27 22 22 20 18 17 15 14 14 12 9 8 8 8 7 6 6 5 5 5 4 4 3 3 3 2 2 2 2 2 2".split(),
        ),
        strict=True,
    )
)
_KEY_LENGTH = 3  # (a shorter key would match too often to be worth it)


def _keys(strings: Sequence[str]) -> dict[str, str]:
    """A key for each string: its longest tail that starts at one of a few characters and is at least _KEY_LENGTH
    long (the string itself when shorter). The characters are chosen greedily, the one that lets the most strings
    start at it per its frequency first, until every string has one (a weighted set cover)."""

    def starts(string: str) -> range:
        return range(max(1, len(string) - _KEY_LENGTH + 1))

    first_chars = {s: {s[i] for i in starts(s)} for s in strings}  # (the characters a key of each can start at)
    chosen: set[str] = set()
    uncovered = set(strings)
    while uncovered:
        counts: dict[str, int] = {}
        for string in uncovered:
            for char in first_chars[string]:
                counts[char] = counts.get(char, 0) + 1
        char = max(sorted(counts), key=lambda c: counts[c] / _FREQUENCY.get(c, 1))
        chosen.add(char)
        uncovered = {s for s in uncovered if char not in first_chars[s]}
    return {s: s[next(i for i in starts(s) if s[i] in chosen) :] for s in strings}


def _starts_a_word(text: str, packages: tuple[str, ...]) -> bool:
    """Does a word of ``text`` start with one of ``packages`` (``re``'s ``\\b(?:a|b)``, by substring search)?"""
    for package in packages:
        at = text.find(package)
        while at >= 0:
            if not at or not is_word_character(text[at - 1]):
                return True
            at = text.find(package, at + 1)
    return False


def _trie(strings: Sequence[str]) -> str:
    """A pattern that matches any of ``strings``, as a trie: ``ab|ac`` -> ``a(?:b|c)`` (``re`` tries an
    alternation's branches one by one at each position; a trie's are few, and most fail on their first
    character). The strings must not be prefixes of one another."""
    tree: dict = {}
    for string in strings:
        node = tree
        for char in string:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if "" in node:
            branches.append("")
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return pattern(tree)


def _on_comment_line(text: str, offset: int) -> bool:
    start = text.rfind("\n", 0, offset) + 1
    start = text.rfind("\r", start, offset) + 1 or start  # (a lone \r ends a line too; searched on this line only)
    return text[start:offset].lstrip().startswith("#")


def _lines_with(text: str, lowered: str, strings: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) offsets of the lines (without their line break) that contain one of ``strings``."""
    lines: set[tuple[int, int]] = set()
    for string in strings:
        at = lowered.find(string)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            lines.add((start, end))
            at = lowered.find(string, end)
    return sorted(lines)
