"""Words the commands' messages share, whatever layer prints them."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``1 file``, ``2 files``; ``plural`` where an added s is wrong (``2 processes``). The summary lines are read,
    and copied into tickets."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"
