"""The start line of every node of a LibCST tree, as ``PositionProvider`` gives it, at a fraction of its cost.

Findings need a line; ``PositionProvider`` computes a full range (line and column, start and end) for every node,
splitting each emitted token with a regular expression, which costs about as much as the port itself on a large
statement. Printing the tree once while counting line breaks, and noting the line where each node (or its
syntactic part, after its leading comment lines) begins, gives the same start lines.
"""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState


class _LineCounter(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.starts: dict[int, int] = {}  # id(node) -> line

    def add_indent_tokens(self) -> None:
        pass  # indentation holds no line break

    def add_token(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            self.line += value.count("\n") + value.count("\r") - value.count("\r\n")

    def pop_trailing_newline(self) -> None:
        pass  # the module's last line break: no node starts after it

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts[id(node)] = self.line

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> _SyntacticStart:
        return _SyntacticStart(self, node, start_node)


class _SyntacticStart:
    """Notes where a node's syntactic part starts: the line when it is entered (or where ``start_node`` started,
    known when it is left). A class rather than a ``contextmanager`` generator, which costs three times as much
    for every node printed."""

    __slots__ = ("counter", "node", "start_node", "line")

    def __init__(self, counter: _LineCounter, node: cst.CSTNode, start_node: cst.CSTNode | None) -> None:
        self.counter, self.node, self.start_node = counter, node, start_node

    def __enter__(self) -> None:
        self.line = self.counter.line

    def __exit__(self, *exc: object) -> None:
        starts = self.counter.starts
        starts[id(self.node)] = starts[id(self.start_node)] if self.start_node is not None else self.line


def start_lines(module: cst.Module) -> dict[int, int]:
    """``id(node)`` -> the 1-based line where ``node`` starts, for every node of ``module`` (keep the module
    alive while the ids are used)."""
    counter = _LineCounter(module)
    module._codegen(counter)
    return counter.starts
