"""What the rules ask about a whole module, answered once per module.

A rule that reasons about more than the statement it rewrites (the extensions a module builds, the names its
functions put on the device, the uses of an import, the devices a function names) asks the module's ``ast``. Asked
from a per-node callback, or once per chunk (each chunk is a statement, ported by fresh transformers), every answer
cost a walk of the whole module, and a port's time grew with the module's nodes times its chunks (issue 27: 12
million ``ast.walk`` steps for diffusers). ``ModuleFacts`` is made once per module and shared by the contexts of all
its chunks and its file-level steps: a fact is a function of it, computed the first time a rule asks and kept.
Facts read the module through ``nodes`` and ``parent`` (one walk of the module, shared), ``statements`` (a walk of
its statements only) and ``lines_with`` (where its text says a word: a fact about rare words reads only the statements
there), never by walking the whole tree again. (The device model reads each statement that names a device with
its own SubtreeDevices: python/device_model.py.)
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ascend_port.core.sources import line_offsets, python_lines
from ascend_port.python.device_model import walk_with_parents
from ascend_port.python.names import ImportIndex, walk_statements

T = TypeVar("T")
Fact = Callable[["ModuleFacts"], T]


class ModuleFacts:
    """One module's facts: ``tree`` is its ``ast`` before the port (or a function that parses it when first
    needed; None when this interpreter cannot read it), ``imports`` what its imports bind, ``text`` its source,
    ``head`` what of it was parsed already and ``lines`` its source's lines (python_lines), when already split."""

    def __init__(
        self,
        tree: ast.Module | Callable[[], ast.Module | None] | None,
        imports: ImportIndex,
        text: str = "",
        head: ast.Module | None = None,
        lines: Sequence[str] | None = None,
    ) -> None:
        self._tree = tree
        self._head = head
        self.imports = imports
        self.text = text  # the module's source ("" when not known: then lines_with says every line)
        self._statements: dict[type, list[ast.AST]] = {}
        self._all_statements: list[ast.AST] | None = None  # (walk_statements' order: ast.walk's, less expressions)
        self._lines: dict[tuple[str, ...], list[int]] = {}
        self._source_lines = lines
        self._line_starts: list[int] | None = None
        self._memo: dict[Callable[..., Any], Any] = {}
        self._by_type: dict[type, list[ast.AST]] = {}
        self._parents: dict[int, ast.AST] | None = None
        self._order: tuple[list[ast.AST], list[int]] | None = None
        self.walks = 0  # whole-module walks made (tests/test_module_facts.py: one per module, whatever its size)

    @property
    def tree(self) -> ast.Module | None:
        if callable(self._tree):
            self._tree = self._tree()
        return self._tree

    @property
    def head(self) -> ast.Module | None:
        """What was parsed of the module to find its chunks: all of it, or its head when the rest holds no trigger
        (port/python.py's cut). Every statement a rule ports is in it: a fact about the functions around them reads
        it, and the rest of the module is not parsed for that."""
        return self._head if self._head is not None else self.tree

    def get(self, fact: Fact[T]) -> T:
        """``fact(self)``, computed once. A fact answers for a module that cannot be read too (``tree`` None: this
        interpreter's ``ast`` cannot parse it, or only its head was parsed and the rest does not parse); ``nodes``
        and ``statements`` are empty then."""
        if fact not in self._memo:
            self._memo[fact] = fact(self)
        return self._memo[fact]  # type: ignore[no-any-return]

    def nodes(self, kind: type[T]) -> list[T]:
        """The module's nodes of this exact type (``type(node) is kind``), in ``ast.walk``'s order."""
        found = self._by_type.get(kind)
        if found is None:
            found = self._by_type[kind] = [n for n in self._walk()[0] if type(n) is kind]
        return found  # type: ignore[return-value]

    def statements(self, kind: type[T]) -> list[T]:
        """The module's statements of this type, at any depth, without walking its expressions (an ``Assign`` or an
        ``Import`` is a statement, and expressions hold none: about ten times cheaper than ``nodes``)."""
        found = self._statements.get(kind)
        if found is None:
            if self._all_statements is None:
                tree = self.tree
                self._all_statements = list(walk_statements(tree)) if tree is not None else []
            found = self._statements[kind] = [n for n in self._all_statements if type(n) is kind]
        return found  # type: ignore[return-value]

    def function_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function (``def`` or ``async def``) whose lines hold ``line``, or None at the top level."""
        around: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
            *self.statements(ast.FunctionDef),
            *self.statements(ast.AsyncFunctionDef),
        ]
        holding = [f for f in around if f.lineno <= line <= (f.end_lineno or f.lineno)]
        return max(holding, key=lambda f: f.lineno, default=None)

    def lines_with(self, *strings: str) -> list[int] | None:
        """The lines (1-based, ascending) of the source that contain one of ``strings``: a fact about the calls that
        name CUDA reads the statements on those lines only (see spans_any). None: every line (no source known)."""
        if not self.text:
            return None
        found = self._lines.get(strings)
        if found is None:
            starts = self.line_starts
            lines: set[int] = set()
            for string in strings:  # (str.find is much faster than testing each line: the strings are rare)
                at = self.text.find(string)
                while at >= 0:
                    lines.add(bisect.bisect_right(starts, at))
                    at = self.text.find(string, at + 1)
            found = self._lines[strings] = sorted(lines)
        return found

    @property
    def line_starts(self) -> list[int]:
        """The offset in the source where each line starts, as Python numbers the lines (core/sources.line_offsets:
        line N is at ``line_starts[N - 1]``)."""
        if self._line_starts is None:
            self._line_starts = line_offsets(
                self._source_lines if self._source_lines is not None else python_lines(self.text)
            )
        return self._line_starts

    def parent(self, node: ast.AST) -> ast.AST | None:
        if self._parents is None:
            order, indices = self._walk()
            self._parents = {id(order[i]): order[p] for i, p in enumerate(indices) if p >= 0}
        return self._parents.get(id(node))

    def _walk(self) -> tuple[list[ast.AST], list[int]]:
        """The one walk of the module (``ast.walk``'s order, with each node's parent's index)."""
        if self._order is None:
            self.walks += 1
            tree = self.tree
            self._order = walk_with_parents(tree) if tree is not None else ([], [])
        return self._order


def spans_any(node: ast.stmt, lines: list[int] | None) -> bool:
    """Does the statement (its decorators included) span one of ``lines`` (ascending; None: every line)?"""
    if lines is None:
        return True
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    i = bisect.bisect_left(lines, first)
    return i < len(lines) and lines[i] <= (node.end_lineno or node.lineno)


def statement_blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of statements a statement holds: its body, else and finally blocks, its handlers' and cases'."""
    blocks = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(node, "handlers", ())] + [c.body for c in getattr(node, "cases", ())]
    return [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def walk_on_lines(tree: ast.AST, lines: list[int] | None) -> Iterator[ast.AST]:
    """``ast.walk(tree)`` (in another order) less the statements, with all they hold, that span none of ``lines``
    (ascending; None: every line): what a question about a few words of a module reads of it."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt) or spans_any(child, lines):
                stack.append(child)


def last_line(tree: ast.Module) -> int:
    """The last line of the module's last statement (0 for an empty module)."""
    return (tree.body[-1].end_lineno or tree.body[-1].lineno) if tree.body else 0
