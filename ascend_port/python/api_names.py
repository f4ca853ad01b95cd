"""The ``torch_npu.*`` and ``torch.npu.*`` names a module uses, resolved through its imports: what the target check
(rules/target_api.py, ``ascend-port check-api``) looks up in a torch-npu release's inventory.

Static, like the rest of the tool: ``import torch_npu as tn; tn.npu_rms_norm`` and ``from torch_npu.npu import mstx;
mstx.range_push`` are found; a name reached through a variable or ``getattr`` is not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_port.python.device_facts import dotted_ast

ROOTS = ("torch_npu", "torch.npu")


@dataclass(frozen=True)
class ApiName:
    line: int
    name: str  # dotted, as torch_npu spells it: "torch_npu.npu.mstx.range_push", "torch.npu.synchronize"


def _in_scope(qualified: str) -> bool:
    return any(qualified == root or qualified.startswith(root + ".") for root in ROOTS)


def _bindings(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it is bound to by the module's imports (at any depth: a function's own import counts)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    bound[head] = head  # `import torch.npu` binds torch
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def api_names(tree: ast.Module) -> list[ApiName]:
    """Every use of a torch_npu / torch.npu name (the longest dotted chain of each use), and every such import."""
    bound = _bindings(tree)
    found: set[ApiName] = set()
    inner: set[int] = set()  # attribute chains that are part of a longer chain
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*" and _in_scope(qualified := f"{node.module}.{alias.name}"):
                    found.add(ApiName(node.lineno, qualified))
        elif isinstance(node, ast.Import):
            found.update(ApiName(node.lineno, a.name) for a in node.names if _in_scope(a.name))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        dotted = dotted_ast(node)
        parts = dotted.split(".") if dotted else None
        if parts is None or parts[0] not in bound:
            continue
        qualified = ".".join([bound[parts[0]], *parts[1:]])
        if _in_scope(qualified):
            found.add(ApiName(node.lineno, qualified))
    return sorted(found, key=lambda n: (n.line, n.name))
