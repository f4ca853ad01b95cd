"""Requirement strings as pip reads them (``name[extras] spec ; marker``, ``name @ url``, an archive's URL or
path), split into raw parts with their offsets, so that a port edits a requirement in place and keeps every other
byte. (packaging's parser gives the meaning, not where each part is written.)"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
# A wheel or sdist named by URL or path: its file name starts with the distribution name.
_ARCHIVE = re.compile(r"(?:^|/)([A-Za-z0-9][A-Za-z0-9._]*?)-\d[^/]*\.(?:whl|tar\.gz|zip)(?:[#?].*)?$")
_EGG = re.compile(r"#egg=([A-Za-z0-9._-]+)")


def canonical(name: str) -> str:
    """PEP 503 normalised name: ``Flash_Attn`` -> ``flash-attn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """One requirement string split into its raw parts (offsets are within the string)."""

    text: str
    name: str
    name_start: int
    spec_end: int  # end of name + extras + version specifier (before whitespace, ``;`` marker or end)
    specifier: str  # the version specifier as written, stripped (may be empty)
    marker: str  # raw text from the ``;`` on, with the whitespace before it; empty when there is none
    is_url: bool = False

    @property
    def key(self) -> str:
        return canonical(self.name)


def parse_requirement(text: str) -> Requirement | None:
    """Read ``name[extras] spec ; marker`` or ``name @ url ; marker``; None for what is not a requirement."""
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    m = _NAME.match(stripped)
    if not m or "://" in stripped[: m.end() + 3]:
        return archive_requirement(text)
    name = m.group(0)
    rest_start = lead + m.end()
    marker_at = _marker_start(text, rest_start)
    body = text[rest_start:marker_at]
    is_url = body.lstrip().startswith("@")
    spec = body
    if spec.lstrip().startswith("["):
        close = spec.find("]")
        if close < 0:
            return None
        spec = spec[close + 1 :]
    spec = spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    if not is_url and spec and not re.fullmatch(r"(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[\w.*+!-]+\s*,?\s*)+", spec):
        return None
    spec_end = len(text[:marker_at].rstrip())
    return Requirement(
        text, name, lead, spec_end, "" if is_url else spec, text[len(text[:marker_at].rstrip()) :], is_url
    )


def _marker_start(text: str, start: int) -> int:
    """Offset of the ``;`` that starts the environment marker, or the end of the text."""
    index = text.find(";", start)
    return len(text) if index < 0 else index


def archive_requirement(text: str) -> Requirement | None:
    stripped = text.strip()
    m = _EGG.search(stripped) or _ARCHIVE.search(stripped.split()[0] if stripped else "")
    if not m:
        return None
    return Requirement(text, m.group(1), len(text) - len(text.lstrip()), len(text.rstrip()), "", "", is_url=True)
