"""The ``torch_npu.*`` and ``torch.npu.*`` names a module uses, resolved through its imports: what the target check
(rules/target_api.py, ``ascend-port check-api``) looks up in a torch-npu release's inventory.

Static, like the rest of the tool: ``import torch_npu as tn; tn.npu_rms_norm`` and ``from torch_npu.npu import mstx;
mstx.range_push`` are found; a name reached through a variable or ``getattr`` is not.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ascend_port.core import npu_api
from ascend_port.core.sources import python_lines
from ascend_port.python.device_facts import dotted_ast
from ascend_port.python.module_facts import walk_on_lines
from ascend_port.python.names import ImportIndex, walk_statements

ROOTS = ("torch_npu", "torch.npu")


@dataclass(frozen=True)
class ApiName:
    line: int
    name: str  # dotted, as torch_npu spells it: "torch_npu.npu.mstx.range_push", "torch.npu.synchronize"


def _in_scope(qualified: str) -> bool:
    return any(qualified == root or qualified.startswith(root + ".") for root in ROOTS)


def api_names(tree: ast.Module, text: str | None = None) -> list[ApiName]:
    """Every use of a torch_npu / torch.npu name (the longest dotted chain of each use), and every such import.
    ``text``: the module's source, when the caller has it: then only the statements whose lines can hold such a name
    are read (a ported module is mostly code that names no torch_npu API)."""
    bound = ImportIndex.from_ast(tree).aliases  # (imports at any depth: a function's own import counts)
    found: set[ApiName] = set()
    for statement in walk_statements(tree):
        if isinstance(statement, ast.Import):
            found.update(ApiName(statement.lineno, a.name) for a in statement.names if _in_scope(a.name))
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                if alias.name != "*" and _in_scope(qualified := f"{statement.module}.{alias.name}"):
                    found.add(ApiName(statement.lineno, qualified))
    nodes = ast.walk(tree) if text is None else walk_on_lines(tree, _hint_lines(text, bound))
    attributes: list[ast.Attribute] = []
    inner: set[int] = set()  # attribute chains that are part of a longer chain
    for node in nodes:
        if isinstance(node, ast.Attribute):
            attributes.append(node)
            inner.add(id(node.value))
    for node in attributes:
        if id(node) in inner:
            continue
        dotted = dotted_ast(node)
        parts = dotted.split(".") if dotted else None
        if parts is None or parts[0] not in bound:
            continue
        qualified = ".".join([bound[parts[0]], *parts[1:]])
        if _in_scope(qualified):
            found.add(ApiName(node.lineno, qualified))
    return sorted(found, key=lambda n: (n.line, n.name))


def _hint_lines(text: str, bound: dict[str, str]) -> list[int]:
    """The lines (1-based, ascending) that can hold a use: those that say ``npu`` (``torch.npu.x``, ``torch_npu.x``,
    a local named for it), or a local bound to a torch_npu name that does not (``import torch_npu as tn``)."""
    aliases = [local for local, target in bound.items() if _in_scope(target) and "npu" not in local]
    other = re.compile(rf"\b(?:{'|'.join(map(re.escape, aliases))})\b") if aliases else None
    return [
        i for i, line in enumerate(python_lines(text), 1) if "npu" in line or (other is not None and other.search(line))
    ]


def missing_names(tree: ast.Module, version: str, text: str | None = None) -> list[tuple[ApiName, str]]:
    """The names of the module the release lacks, each with the TODO message; ``text``: its source, when known."""
    out = []
    for name in api_names(tree, text):
        if npu_api.name_status(name.name, version) is False:
            where = npu_api.availability(name.name)
            out.append((name, f"{name.name} is missing from torch_npu {version} ({where}): port by hand"))
    return out
