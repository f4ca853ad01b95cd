"""How much code around a trigger a transformer must see: its scope.

Only the statements that contain a trigger are parsed with LibCST (see codemods/chunks.py), and the fewer lines
reach LibCST, the faster a run. A scope picks, among the statements that enclose a trigger's match, the one to
parse: the innermost statement for a rule that rewrites one call, the enclosing function for one that reads the
function's other statements, the whole class for one that must understand a class. It sees the statements as
Python's ``ast`` read them, outermost first, and the module's imports, so it can also say that a match needs
nothing ported at all (``None``): an ``rsqrt`` in a class without a ``forward`` is not an RMSNorm.

A scope must never be narrower than what its rules read: a chunk is ported on its own, and a rule that needs a
name defined outside the chunk reads the module's ``ast`` (``PortContext.module()``), never the text around it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ascend_port.python.names import ImportIndex

# (enclosing statements, outermost first and never empty; the module's imports) -> the one to port, or None
Scope = Callable[[Sequence[ast.stmt], ImportIndex], "ast.stmt | None"]

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def statement(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt:
    """The innermost statement: for rules that rewrite an expression or a statement on its own."""
    return path[-1]


def top(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt:
    """The whole top-level statement."""
    return path[0]


def enclosing(path: Sequence[ast.stmt], *types: type[ast.stmt]) -> ast.stmt | None:
    """The innermost statement of ``path`` of one of ``types`` (for scopes that check what they find)."""
    return next((node for node in reversed(path) if isinstance(node, types)), None)


def innermost(*types: type[ast.stmt], otherwise: Scope = top) -> Scope:
    """The innermost enclosing statement of one of ``types``; ``otherwise`` when there is none."""

    def scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
        return enclosing(path, *types) or otherwise(path, imports)

    scope.__qualname__ = f"innermost({', '.join(t.__name__ for t in types)})"
    return scope


def outermost(*types: type[ast.stmt], otherwise: Scope = top) -> Scope:
    """The outermost enclosing statement of one of ``types``; ``otherwise`` when there is none."""

    def scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
        return next((node for node in path if isinstance(node, types)), None) or otherwise(path, imports)

    scope.__qualname__ = f"outermost({', '.join(t.__name__ for t in types)})"
    return scope


def nothing(path: Sequence[ast.stmt], imports: ImportIndex) -> None:
    """No statement: the match needs nothing ported (the ``otherwise`` of a scope that recognises its construct)."""
    return None


def imported(*modules: str, then: Scope = statement) -> Scope:
    """``then`` in a module that imports from one of ``modules``, else nothing: for a trigger that is a bare name
    (``graph``), which can only mean theirs through such an import (the dotted form has a trigger of its own)."""

    def scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
        found = any(target == m or target.startswith(m + ".") for target in imports.aliases.values() for m in modules)
        return then(path, imports) if found else None

    scope.__qualname__ = f"imported({', '.join(modules)})"
    return scope


@dataclass(frozen=True)
class Trigger:
    """A regular-expression fragment whose matches must be ported, and the scope they need. Matches in comments,
    docstrings and other triple-quoted strings never count: no rule rewrites their text."""

    pattern: str
    scope: Scope = statement
    # lower-case strings a module must all contain for the matches in it to count: what the rule needs elsewhere
    # in the module (an RMSNorm's `nn.Parameter`), which rejects a file before it is parsed
    also: tuple[str, ...] = ()
    # packages one of which the module must import for its matches to count: a logical line (cut at its `#`) that
    # says `import` and a word that starts with one of them. The rule resolves what it ports through the module's
    # imports: a module that only names the library (diffusers' `enable_xformers_memory_efficient_attention`)
    # imports none of it.
    imports: tuple[str, ...] = ()
    # a test of the module's whole text that must hold for its matches to count (asked once per text): what the
    # rule needs of the module that no string says (rules/multidevice.py: a device besides CUDA's)
    when: Callable[[str], bool] | None = None
