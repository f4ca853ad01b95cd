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
Where every flash-attn call of the module was ported, its version checks (`flash_attn.__version__`, `from flash_attn
import __version__`) read the release whose API the ported calls follow (FLASH_VERSION): the checks they guard pass.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Set

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import walk_statements
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
    `else:`), since the NPU replacement always exists; a block left empty gets `pass`. Where every flash-attn call
    of the module was ported, `flash_attn.__version__` becomes the string of the flash-attn release whose API the
    ported calls follow (FLASH_VERSION in unused_imports.py), so the version checks that guard them pass.

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


        class _NpuRMSNorm(torch.nn.RMSNorm):
            ...


        norm = _NpuRMSNorm(dim, elementwise_affine=True, eps=1e-5)
    """,
    follows=("NPU4",),
)

GPU_PACKAGES = re.compile(r"^(flash_attn\w*|xformers|apex)(\.|$)")
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
VER = "__version__"
# The flash-attn release whose API the ported calls follow (causal aligned bottom-right as since 2.1, window_size,
# unpad_input's five values): what `flash_attn.__version__` reads once every flash-attn call of a module is ported.
FLASH_VERSION = "2.8.3"


def _flash_names(facts: ModuleFacts) -> tuple[set[str], set[str], bool]:
    """The flash_attn names a module loads: the locals bound to `flash_attn.__version__`, the locals bound to the
    flash_attn package that are loaded only as `X.__version__`, and whether anything else of flash_attn is loaded."""
    kinds: dict[str, str] = {}
    for statement in (*facts.statements(ast.Import), *facts.statements(ast.ImportFrom)):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name.split(".")[0] == "flash_attn":
                    kind = "module" if alias.asname is None or alias.name == "flash_attn" else "other"
                    local = alias.asname or "flash_attn"
                    kinds[local] = kind if kinds.get(local, kind) == kind else "other"
        elif (
            isinstance(statement, ast.ImportFrom)
            and statement.level == 0
            and (statement.module or "").split(".")[0] == "flash_attn"
        ):
            for alias in statement.names:
                kind = "version" if statement.module == "flash_attn" and alias.name == "__version__" else "other"
                local = alias.asname or alias.name
                kinds[local] = kind if kinds.get(local, kind) == kind else "other"
    versions: set[str] = set()
    modules: set[str] = set()
    other = False
    if not kinds:
        return versions, modules, other
    for node in facts.nodes(ast.Name):
        if not (isinstance(node.ctx, ast.Load) and node.id in kinds):
            continue
        parent = facts.parent(node)
        if kinds[node.id] == "version":
            versions.add(node.id)
        elif kinds[node.id] == "module" and isinstance(parent, ast.Attribute) and parent.attr == "__version__":
            modules.add(node.id)
        else:
            other = True
    return versions, modules, other


def _version_pins(ctx: PortContext, after: ModuleFacts) -> tuple[set[str], set[str]]:
    """The flash_attn version locals and package locals to pin to FLASH_VERSION: only where the module used other
    flash_attn names before the port and none after it (every call the version checks guard was ported)."""
    if ctx.module() is None or not ctx.fact(_flash_names)[2]:
        return set(), set()
    versions, modules, other = _flash_names(after)
    return (set(), set()) if other else (versions, modules)


def _gpu_bindings(facts: ModuleFacts) -> dict[str, list[ast.stmt]]:
    """Local name -> the import statements of GPU-only packages that bind it (anywhere in the module; an import is
    a statement: its expressions are not walked)."""
    out: dict[str, list[ast.stmt]] = {}
    for node in walk_statements(facts.tree) if facts.tree is not None else ():
        if isinstance(node, ast.Import):
            for alias in node.names:
                if GPU_PACKAGES.match(alias.name):
                    out.setdefault(alias.asname or alias.name.split(".")[0], []).append(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and GPU_PACKAGES.match(node.module):
            for alias in node.names:
                if alias.name != "*":
                    out.setdefault(alias.asname or alias.name, []).append(node)
    return out


def _used(facts: ModuleFacts) -> set[str]:
    """The names a module loads, and its strings (a name in a string may be an export: `__all__ = ["flash_attn_func"]`:
    keep it)."""
    names = {n.id for n in facts.nodes(ast.Name) if isinstance(n.ctx, ast.Load)}
    return names | {n.value for n in facts.nodes(ast.Constant) if isinstance(n.value, str)}


class _Remover(cst.CSTTransformer):
    def __init__(self, unused: set[str], versions: Set[str] = frozenset(), modules: Set[str] = frozenset()) -> None:
        super().__init__()
        self.unused = unused | modules  # a package used only as `X.__version__` is unused once that is pinned
        self.versions, self.modules = versions, modules
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

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name) and updated.value.value in self.modules and updated.attr.value == VER:
            return cst.SimpleString(f'"{FLASH_VERSION}"')
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if not updated.body:
            self.removed_lines.add(id(original))
            return cst.RemoveFromParent()
        pinned = self._pinned_version(updated)
        if pinned is not None:
            self.removed_lines.add(id(original))  # (an import gone: its try may unwrap)
            return pinned
        return updated

    def _pinned_version(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine | None:
        """`from flash_attn import __version__ as v` -> `v = FLASH_VERSION` (its TODO comments go with the import)."""
        if len(line.body) != 1 or not isinstance(line.body[0], cst.ImportFrom):
            return None
        node = line.body[0]
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return None
        if cst.Module([]).code_for_node(node.module) != "flash_attn" or len(node.names) != 1:
            return None
        alias = node.names[0]
        local = alias.evaluated_alias or alias.evaluated_name
        if alias.evaluated_name != VER or local not in self.versions:
            return None
        value = cst.SimpleString(f'"{FLASH_VERSION}"')
        leading = [e for e in line.leading_lines if e.comment is None or "TODO(ascend-port)" not in e.comment.value]
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(local))], value=value)
        return line.with_changes(body=[assign], leading_lines=leading)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if updated.body:
            first = updated.body[0]
            removed = original.body and id(original.body[0]) in self.removed_lines
            if removed and isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                # no blank line under the `def`
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
        removed = any(id(s) in self.removed_lines for s in original.body.body)
        if not removed or updated.finalbody is not None:
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


def _inert(statement: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
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


def _ported_away(ctx: PortContext, after: ModuleFacts) -> tuple[dict[str, list[ast.stmt]], set[str]]:
    """The GPU-only imports of the module before the port (by the name they bind), and the names among them that
    were used before the port and are not after it (``after``: the facts of the ported module)."""
    before, bound_after = ctx.fact(_gpu_bindings), _gpu_bindings(after)
    used_before, used_after = ctx.fact(_used), _used(after)
    unused = {name for name in bound_after if name in used_before and name in before and name not in used_after}
    # (an import a `# ascend-port: ignore` comment keeps stays)
    return before, {n for n in unused if not any(ctx.suppressed(UNUSED_GPU_IMPORT, line=s.lineno) for s in before[n])}


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
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and all((a.asname or a.name.split(".")[0]) in unused for a in node.names)
    }
    ctx.findings[:] = [f for f in ctx.findings if f.rewrites or f.line not in gone]


def _record_pins(ctx: PortContext, before: dict[str, list[ast.stmt]], versions: set[str], modules: set[str]) -> None:
    """A finding for each version import pinned, and for the version checks of a package local; the TODO another
    rule wrote above a pinned import went with the import: its finding too."""
    lines = {node.lineno for name in versions for node in before.get(name, ())}
    for line in sorted(lines):
        ctx.findings.append(
            Finding(
                UNUSED_GPU_IMPORT,
                line,
                f"flash_attn.__version__ -> {FLASH_VERSION!r} (every flash-attn call was ported)",
                applied=True,
            )
        )
    for name in sorted(modules):
        message = f"{name}.__version__ -> {FLASH_VERSION!r} (every flash-attn call was ported)"
        ctx.findings.append(Finding(UNUSED_GPU_IMPORT, before[name][0].lineno, message, applied=True))
    ctx.findings[:] = [f for f in ctx.findings if f.rewrites or f.line not in lines]


class UnusedImportTransformer(PortTransformer):
    """NPU408. Has no statement-level work: everything happens in ``finish``."""

    RULES = (UNUSED_GPU_IMPORT,)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if ctx.module_ast is None or not ctx.selection.enabled(UNUSED_GPU_IMPORT):
            return text
        if not any(GPU_PACKAGES.match(target) for target in ctx.imports.aliases.values()):
            return text  # the usual case, decided without walking the module
        after = ModuleFacts(tree(), ctx.imports)  # (one walk of the ported module, for both)
        before, unused = _ported_away(ctx, after)
        versions, modules = _version_pins(ctx, after)
        if not unused and not versions and not modules:
            return text
        module = cst.parse_module(text)
        new_code = module.visit(_Remover(unused, versions, modules)).code
        if new_code == text:
            return text
        _record_removals(ctx, before, unused | modules)
        _record_pins(ctx, before, versions, modules)
        return new_code
