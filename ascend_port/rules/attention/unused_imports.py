"""NPU408: imports of GPU-only packages (flash_attn, xformers, apex) that the port made unused are removed.

This is a file-level step (PortTransformer.finish): whether an import is still needed is known only after every
statement of the module has been ported. An import is removed when a name it binds was used before the port and is
used nowhere after it; the common availability guard

    try:
        from flash_attn import flash_attn_func
        HAS_FLASH_ATTN = True
    except ImportError:
        HAS_FLASH_ATTN = False

then has nothing left that can fail, so it is unwrapped to `HAS_FLASH_ATTN = True` (the NPU port is always there).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.python.transformer import PortContext, PortTransformer

UNUSED_GPU_IMPORT = rule(
    "NPU408",
    "unused-gpu-import",
    Confidence.HIGH,
    "Imports of flash_attn, xformers and apex that the port made unused are removed (and their try/except guard).",
    """
    flash-attn, xformers and apex cannot be installed on an NPU host, so an import left behind after its uses were
    ported would fail there. A name is removed from its import when it was used before the port and is used
    nowhere after it (names listed in strings, as in `__all__`, are kept). When a `try:` whose handlers catch only
    `ImportError`/`ModuleNotFoundError` has nothing left but plain assignments, it is replaced by its body (and
    `else:`), since the NPU replacement always exists; a block left empty gets `pass`.

    Before:
        import torch
        try:
            from apex.normalization import FusedRMSNorm
            HAS_APEX = True
        except ImportError:
            HAS_APEX = False
        norm = FusedRMSNorm(dim, elementwise_affine=True)
    After:
        import torch
        HAS_APEX = True
        norm = torch.nn.RMSNorm(dim, elementwise_affine=True, eps=1e-5)
    """,
)

GPU_PACKAGES = re.compile(r"^(flash_attn\w*|xformers|apex)(\.|$)")
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _bindings(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """Local name -> the import statements of GPU-only packages that bind it (anywhere in the module)."""
    out: dict[str, list[ast.stmt]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if GPU_PACKAGES.match(alias.name):
                    out.setdefault(alias.asname or alias.name.split(".")[0], []).append(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and GPU_PACKAGES.match(node.module):
            for alias in node.names:
                if alias.name != "*":
                    out.setdefault(alias.asname or alias.name, []).append(node)
    return out


def _used(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # a name in a string may be an export (`__all__ = ["flash_attn_func"]`): keep it
    return names


class _Remover(cst.CSTTransformer):
    def __init__(self, unused: set[str]) -> None:
        super().__init__()
        self.unused = unused
        self.removed_lines: set[int] = set()  # ids of SimpleStatementLines removed whole
        self.fillers: set[int] = set()  # ids of the `pass` statements this pass wrote

    def _keep(self, alias: cst.ImportAlias, module: str) -> bool:
        local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
        return not (GPU_PACKAGES.match(module) and local in self.unused)

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        names = [a for a in updated.names if self._keep(a, a.evaluated_name)]
        return _with_names(updated, names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if updated.relative or updated.module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        module = cst.Module([]).code_for_node(updated.module)
        names = [a for a in updated.names if self._keep(a, module)]
        return _with_names(updated, names)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if not updated.body:
            self.removed_lines.add(id(original))
            return cst.RemoveFromParent()
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if updated.body:
            if original.body and id(original.body[0]) in self.removed_lines:  # no blank line under the `def`
                first = updated.body[0]
                updated = updated.with_changes(
                    body=[
                        first.with_changes(leading_lines=_without_leading_blanks(first.leading_lines)),
                        *updated.body[1:],
                    ]
                )
            return updated
        filler = cst.SimpleStatementLine([cst.Pass()])
        self.fillers.add(id(filler))
        return updated.with_changes(body=[filler])

    def leave_Try(self, original: cst.Try, updated: cst.Try):
        if not any(id(s) in self.removed_lines for s in original.body.body) or updated.finalbody is not None:
            return updated
        if not all(_catches_import_error(h) for h in updated.handlers):
            return updated
        body = [s for s in updated.body.body if id(s) not in self.fillers]
        if not all(_inert(s) for s in body):
            return updated
        rest = [*body, *(updated.orelse.body.body if updated.orelse else ())]
        if not rest:
            return cst.RemoveFromParent()
        rest[0] = rest[0].with_changes(
            leading_lines=[*updated.leading_lines, *_without_leading_blanks(rest[0].leading_lines)]
        )
        return cst.FlattenSentinel(rest)


def _without_leading_blanks(lines) -> list[cst.EmptyLine]:
    lines = list(lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return lines


def _with_names(node, names):
    if not names:
        return cst.RemoveFromParent()
    if len(names) == len(node.names):
        return node
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if isinstance(node, cst.ImportFrom) and node.lpar is not None and len(names) == 1:
        return node.with_changes(names=names, lpar=None, rpar=None)
    return node.with_changes(names=names)


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    kind = handler.type
    kinds = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    return kind is not None and all(isinstance(k, cst.Name) and k.value in IMPORT_ERRORS for k in kinds)


def _inert(statement: cst.BaseStatement) -> bool:
    """A statement that cannot raise ImportError: `pass` or assignments of literals and names."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if (
            isinstance(small, (cst.Assign, cst.AnnAssign))
            and small.value is not None
            and isinstance(small.value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))
        ):
            continue
        return False
    return True


def _ported_away(ctx: PortContext, tree: Callable[[], ast.Module]) -> tuple[dict[str, list[ast.stmt]], set[str]]:
    """The GPU-only imports of the module before the port (by the name they bind), and the names among them that
    were used before the port and are not after it."""
    before, after = _bindings(ctx.module()), _bindings(tree())
    used_before, used_after = _used(ctx.module()), _used(tree())
    return before, {name for name in after if name in used_before and name in before and name not in used_after}


def _record_removals(ctx: PortContext, before: dict[str, list[ast.stmt]], unused: set[str]) -> None:
    """A finding for each removed import of an ``unused`` name, at its line before the port."""
    for name in sorted(unused):
        for node in before[name]:
            ctx.findings.append(
                Finding(
                    UNUSED_GPU_IMPORT,
                    node.lineno,
                    f"unused import of {name} removed (its uses were ported)",
                    applied=True,
                )
            )
    # A TODO another rule wrote above an import statement that is now gone went with it: drop its finding too.
    gone = {
        node.lineno
        for nodes in before.values()
        for node in nodes
        if all((a.asname or a.name.split(".")[0]) in unused for a in node.names)
    }
    ctx.findings[:] = [f for f in ctx.findings if f.rule.rewrites or f.line not in gone]


class UnusedImportTransformer(PortTransformer):
    """NPU408. Has no statement-level work: everything happens in ``finish``."""

    RULES = (UNUSED_GPU_IMPORT,)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if ctx.module_ast is None or not ctx.selection.enabled(UNUSED_GPU_IMPORT):
            return text
        if not any(GPU_PACKAGES.match(target) for target in ctx.imports.aliases.values()):
            return text  # the usual case, decided without walking the module
        before, unused = _ported_away(ctx, tree)
        if not unused:
            return text
        module = cst.parse_module(text)
        new_code = module.visit(_Remover(unused)).code
        if new_code == text:
            return text
        _record_removals(ctx, before, unused)
        return new_code
