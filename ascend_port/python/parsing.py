"""Python's own ``ast`` parser (C, fast) for the questions that need no LibCST tree."""

from __future__ import annotations

import ast
import warnings

from ascend_port.core.porting import PortError

PORT_DOES_NOT_PARSE = "internal error: the ported source would not parse; the file is left unchanged"


def parse_quietly(text: str) -> ast.Module | None:
    """``text``'s ``ast``, or None when it does not parse here; the user's SyntaxWarnings are not ours to print."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def parse_or_fail(text: str) -> ast.Module:
    """The ``ast`` of ported ``text``, which must parse: a PortError otherwise (the file is then left unchanged)."""
    tree = parse_quietly(text)
    if tree is None:
        raise PortError(PORT_DOES_NOT_PARSE)
    return tree
