"""The start line of every node of a LibCST tree, as ``PositionProvider`` gives it, at a fraction of its cost.

Findings need a line; ``PositionProvider`` computes a full range (line and column, start and end) for every node,
splitting each emitted token with a regular expression, which costs about as much as the port itself on a large
statement. Printing the tree once while counting line breaks, and noting the line where each node (or its
syntactic part, after its leading comment lines) begins, gives the same start lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> Iterator[None]:
        line = self.line
        yield
        self.starts[id(node)] = self.starts[id(start_node)] if start_node is not None else line


def start_lines(module: cst.Module) -> dict[int, int]:
    """``id(node)`` -> the 1-based line where ``node`` starts, for every node of ``module`` (keep the module
    alive while the ids are used)."""
    counter = _LineCounter(module)
    module._codegen(counter)
    return counter.starts
