"""A pyflakes-level name check for the review: the names a partial acceptance leaves undefined.

The review applies only some of the port's hunks, and hunks depend on each other by name: the hunk that removes
``from flash_attn import flash_attn_func`` is only right together with the hunk that ports the call. A parse
cannot see that; this check can. It is deliberately small (the standard library's ``symtable``, no new
dependency): a name is undefined when some scope reads it as a global and the module never binds it. Conditional
bindings count as bindings, as in pyflakes, so it never blames working code; it compares the file before and
after, so only what the acceptance introduced is reported.
"""

from __future__ import annotations

import builtins
import importlib.util
import re
import symtable

# Set by the import system on every module; code may read them without binding them.
_MODULE_NAMES = {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__"}
_MODULE_NAMES |= {"__path__", "__cached__", "__annotations__", "__dict__"}
_KNOWN = set(dir(builtins)) | _MODULE_NAMES
_STAR_IMPORT = re.compile(rb"^\s*from\s+\S+\s+import\s+\*", re.MULTILINE)


def undefined_names(data: bytes) -> set[str] | None:
    """The global names ``data`` (Python source) reads and never binds; None when it cannot tell (a syntax
    error, an undecodable file, ``from x import *``)."""
    if _STAR_IMPORT.search(data):
        return None
    try:
        table = symtable.symtable(importlib.util.decode_source(data), "<ported>", "exec")
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    read: set[str] = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    pending = list(table.get_children())
    while pending:
        scope = pending.pop()
        pending.extend(scope.get_children())
        for symbol in scope.get_symbols():
            if symbol.is_declared_global() and (symbol.is_assigned() or symbol.is_imported()):
                bound.add(symbol.get_name())  # `global x; x = ...` in a function binds a module name
            elif symbol.is_global() and symbol.is_referenced():
                read.add(symbol.get_name())
    return read - bound - _KNOWN


def new_undefined_names(old: bytes, new: bytes, *others: bytes) -> set[str]:
    """The names ``new`` leaves undefined that ``old`` did not (empty when either cannot be checked), less those
    that ``others`` leave undefined too (the whole port: a partial acceptance is judged against what the tool
    itself would write, so answering y to everything always gives the port)."""
    after = undefined_names(new)
    if not after:
        return set()
    for text in (old, *others):
        before = undefined_names(text)
        if before is None:
            return set()
        after -= before
    return after
