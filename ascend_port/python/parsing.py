"""Python's own ``ast`` parser (C, fast) for the questions that need no LibCST tree."""

from __future__ import annotations

import ast
import warnings


def parse_quietly(text: str) -> ast.Module | None:
    """``text``'s ``ast``, or None when it does not parse here; the user's SyntaxWarnings are not ours to print."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None
