"""A call's arguments and string literals as the kernels rules read them (a keyword, a positional argument, the
strings in a list of sources): the layers of KernelTransformer and the kernel scan share them."""

from __future__ import annotations

import libcst as cst


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _positional(call: cst.Call, index: int) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index] if index < len(positional) else None


def _strings_in(node: cst.CSTNode) -> list[str]:
    """Every plain string literal inside ``node`` (list literals of sources, mostly)."""
    found: list[str] = []

    class Collector(cst.CSTVisitor):
        def visit_SimpleString(self, s: cst.SimpleString) -> None:
            if isinstance(value := s.evaluated_value, str):
                found.append(value)

    node.visit(Collector())
    return found
