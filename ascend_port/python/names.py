"""Cheap qualified-name resolution from a module's imports.

LibCST's QualifiedNameProvider builds full scope analysis, which costs about a second on a large module. Porting
only needs to know what the names bound by ``import`` statements refer to, so we read the imports once from
Python's own ``ast`` (a C parser) and resolve dotted expressions against that table. Imports anywhere in the module
count (function-local ``import torch`` is common in research code); a name that no import binds resolves to None,
which is what keeps ``cfg.cuda`` or a local variable named ``cuda`` out of reach of the rules.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass, field

import libcst as cst

_BLOCK_NODES = (ast.stmt, ast.excepthandler, ast.match_case)


def is_word_character(char: str) -> bool:
    """A character of a word as ``re``'s ``\\w`` reads it: a letter or a digit of any script, or ``_``."""
    return char.isalnum() or char == "_"


def walk_statements(tree: ast.AST):
    """What ``ast.walk`` yields, in the same (breadth-first) order, minus the expressions: an import is a statement
    and expressions hold none, and skipping them makes this ~10 times faster on a large module."""
    queue = deque([tree])
    while queue:
        node = queue.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], _BLOCK_NODES):
                queue.extend(value)
        yield node


@dataclass
class ImportIndex:
    """Local name -> fully qualified name, for every name an import statement binds."""

    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_ast(cls, tree: ast.AST) -> ImportIndex:
        index = cls()
        for node in walk_statements(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        index.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        index.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name != "*":
                        index.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return index

    @classmethod
    def from_cst(cls, module: cst.Module) -> ImportIndex:
        """The same table from a LibCST tree, for code that Python's ``ast`` of this interpreter cannot parse."""
        index = cls()
        for node in _walk_imports(module):
            if isinstance(node, cst.Import):
                for alias in node.names:
                    name = dotted(alias.name) or ""
                    if alias.asname and isinstance(alias.asname.name, cst.Name):
                        index.aliases[alias.asname.name.value] = name
                    else:
                        top = name.split(".", 1)[0]
                        index.aliases[top] = top
            elif node.module is not None and not node.relative and not isinstance(node.names, cst.ImportStar):
                module_name = dotted(node.module)
                for alias in node.names:
                    local = alias.asname.name if alias.asname else alias.name
                    if isinstance(local, cst.Name) and isinstance(alias.name, cst.Name):
                        index.aliases[local.value] = f"{module_name}.{alias.name.value}"
        return index

    def local_name_for(self, qualified: str) -> str | None:
        """The local name bound to exactly ``qualified`` (e.g. the alias of ``torch``), if any."""
        for local, target in self.aliases.items():
            if target == qualified:
                return local
        return None

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """``tc.synchronize`` -> ``torch.cuda.synchronize`` when ``import torch.cuda as tc``; else None."""
        parts: list[str] = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        base = self.aliases.get(node.value)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])


def _walk_imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    found: list[cst.Import | cst.ImportFrom] = []

    class Collector(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            found.append(node)
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            found.append(node)
            return False

    module.visit(Collector())
    return found


def dotted(node: cst.BaseExpression) -> str | None:
    """The source text of a plain dotted name (``a.b.c``), or None for anything else."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    return ".".join([node.value, *reversed(parts)])


def build_dotted(path: str) -> cst.Attribute | cst.Name:
    """``"torch.npu.matmul"`` -> the CST expression for it."""
    head, *rest = path.split(".")
    expr: cst.Attribute | cst.Name = cst.Name(head)
    for part in rest:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr


def names_in(node: cst.CSTNode) -> set[int]:
    """ids of every Name and Attribute inside ``node`` (an import statement's names are not uses)."""
    found: set[int] = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(id(n))

        def visit_Attribute(self, n: cst.Attribute) -> None:
            found.add(id(n))

    node.visit(Collector())
    return found
