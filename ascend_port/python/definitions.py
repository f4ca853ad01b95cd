"""Top-level definitions a port writes into a module once: the helpers its rewrites call (the attention and padding
helpers, apex's norm classes, the range stack of NPU700).

They are inserted after every statement is ported (``PortTransformer.finish``), so it works however the module was
split into chunks, in front of the first top-level statement that uses one of them; a name the module already
defines or imports at its top level is never written again, so a second port changes nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence

from ascend_port.core.sources import python_lines

# The text of the definitions of ``missing`` (in the caller's order, their requirements included) for ``tree``, or
# None when they cannot be written into this module.
Block = Callable[[ast.Module, list[str]], "str | None"]


def insert_definitions(
    text: str,
    parse: Callable[[], ast.Module],
    names: Sequence[str],
    block: Block,
    requires: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """``text`` with ``block(tree, missing)`` in front of the first top-level statement that uses one of ``names``
    the module neither defines nor imports at its top level; ``requires``: the names a definition calls, written with
    it (``parse()`` is the module's ``ast``, parsed only when one of ``names`` is in ``text``)."""
    if not any(name in text for name in names):
        return text  # the usual case, decided without parsing or walking the module
    tree = parse()
    defined = top_level_bindings(tree)
    used = [(node, _loaded_names(node) & set(names)) for node in tree.body]
    missing = set().union(*(names_used for _, names_used in used)) - defined
    if not missing:
        return text
    for name in list(missing):
        missing |= set((requires or {}).get(name, ())) - defined
    first = next(node for node, names_used in used if names_used & missing)
    source = block(tree, [name for name in names if name in missing] + sorted(missing - set(names)))
    return text if source is None else insert_before(text, first, source)


def top_level_bindings(tree: ast.Module) -> set[str]:
    """The names a module's top level binds by ``def``, ``class`` and imports (a helper imported from the module a
    project-wide port writes once, rules/attention/shared.py, is defined: writing it again would shadow the import)."""
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    imports = (n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    return defined | {alias.asname or alias.name.split(".")[0] for n in imports for alias in n.names}


def bound_name(tree: ast.Module, module: str) -> str | None:
    """The name a top-level `import torch` (or `import torch as th`, `import torch.nn`) binds to ``module``."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name == module:
                    return alias.asname
                if not alias.asname and alias.name.split(".")[0] == module:
                    return module
    return None


def _loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def insert_before(text: str, node: ast.stmt, block: str) -> str:
    """Insert a top-level block before ``node`` and the comment lines right above it, two blank lines around."""
    lines = python_lines(text)  # as ast numbers them
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    at = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]) - 1
    while at > 0 and lines[at - 1].lstrip().startswith("#"):
        at -= 1
    blank_above = 0
    while blank_above < at and not lines[at - 1 - blank_above].strip():
        blank_above += 1
    before = newline * (max(0, 2 - blank_above) if at > 0 else 0)
    body = re.sub(r"\n", newline, block) if newline != "\n" else block
    return "".join(lines[:at]) + before + body + newline * 2 + "".join(lines[at:])
