"""Reading comparisons: the side a value is on, and what it is compared with (``cap[0] >= 8``, ``(8, 0) <= cap``)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst


def compared(
    operand: cst.CSTNode, parents: Sequence[cst.CSTNode]
) -> tuple[cst.Comparison, cst.BaseExpression, cst.BaseCompOp, bool] | None:
    """The one-operator comparison ``operand`` is a side of (``parents``: its ancestors, innermost last): the
    comparison, the other side, the operator, and whether ``operand`` is on the right; None if it is not one."""
    if parents and isinstance(parents[-1], cst.ComparisonTarget):
        parents = parents[:-1]
    comparison = parents[-1] if parents else None
    if not isinstance(comparison, cst.Comparison) or len(comparison.comparisons) != 1:
        return None
    target = comparison.comparisons[0]
    if comparison.left is operand:
        return comparison, target.comparator, target.operator, False
    if target.comparator is operand:
        return comparison, comparison.left, target.operator, True
    return None
