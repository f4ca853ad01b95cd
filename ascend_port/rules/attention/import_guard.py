"""NPU411: a top-level import of a CUDA-only package that the port could not replace is guarded.

flash-attn, xformers, apex, Liger-Kernel and the like cannot be installed on an NPU host. Where the port left such
an import (NPU408 removes those whose uses it ported; the others carry a TODO: NPU409, NPU504, ...), the whole
module would fail at import, and with it every ported feature in it and every module that imports it. Guarding
the import confines the failure to the code that uses what it binds. This is a file-level step
(PortTransformer.finish), after NPU408 has removed the imports whose uses were ported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Set

import libcst as cst
from libcst.metadata import PositionProvider

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.python.transformer import PortContext, PortTransformer

GUARD = rule(
    "NPU411",
    "guard-gpu-import",
    Confidence.HIGH,
    "A top-level import of a CUDA-only package the port left gets a try/except ImportError guard (names -> None).",
    """
    The import is wrapped in `try:` and its `except ImportError:` binds each imported name to None, so the module
    imports on an NPU host and only the code that uses these names fails, when it runs (its TODO above the import
    says what to port). Only imports at the top level of the module are guarded (those of flash-attn, xformers,
    apex, Liger-Kernel, FlashInfer, mamba-ssm, causal-conv1d, Transformer Engine, PyCUDA that are still there after
    the port), and only when every use of their names is inside a function body (a decorator, base class, default
    value or top-level statement would still fail at import: those are left as they are). An import whose names
    are never used is an availability check or a side effect (its failure is the point) and is left as it is;
    imports already inside a `try:` (an existing guard) are never touched, nor is code in a project that also runs
    on other devices, nor an import of the project's own package (Liger-Kernel's modules import liger_kernel).
    Review: a caller that detected flash-attn by importing this module in a `try:` now succeeds and fails later, at
    the use.

    Before:
        from flash_attn.layers.rotary import apply_rotary_emb


        def rotate(x, cos, sin):
            return apply_rotary_emb(x, cos, sin)
    After:
        try:
            # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: ...
            from flash_attn.layers.rotary import apply_rotary_emb
        except ImportError:  # no NPU build: the code that uses these names fails when it runs
            apply_rotary_emb = None


        def rotate(x, cos, sin):
            return apply_rotary_emb(x, cos, sin)
    """,
    follows=("NPU4",),
)

CUDA_ONLY = (
    r"flash_attn\w*|xformers|apex|amp_C|liger_kernel|flashinfer|mamba_ssm|causal_conv1d|transformer_engine|pycuda"
)
PACKAGE = re.compile(rf"^(?:{CUDA_ONLY})(?:\.|$)")
# A top-level import of such a package: the cheap test before any parsing.
CANDIDATE = re.compile(rf"^(?:from|import)\s+(?:{CUDA_ONLY})\b", re.M)
EXCEPT_COMMENT = "# no NPU build: the code that uses these names fails when it runs"


def _bound(node: ast.stmt) -> list[str] | None:
    """The names a top-level import of a CUDA-only package binds (None: not such an import)."""
    if isinstance(node, ast.Import) and all(PACKAGE.match(a.name) for a in node.names):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and PACKAGE.match(node.module or ""):
        if any(a.name == "*" for a in node.names):
            return None
        return [a.asname or a.name for a in node.names]
    return None


def _packages(node: ast.stmt) -> set[str]:
    """The top-level packages an import statement names (none for a relative import or another statement)."""
    if isinstance(node, ast.Import):
        return {a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return {node.module.split(".")[0]}
    return set()


def _import_time_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes evaluated when the module is imported: all but function and lambda bodies."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts: list[ast.AST] = [*node.decorator_list, node.args]
        parts += [node.returns] if node.returns else []
    elif isinstance(node, ast.Lambda):
        parts = [node.args]
    else:
        parts = list(ast.iter_child_nodes(node))
    for part in parts:
        yield from _import_time_nodes(part)


def _guardable(tree: ast.Module) -> dict[int, list[str]]:
    """Line of each top-level import to guard -> the names it binds."""
    import_time = {
        n.id
        for top in tree.body
        for n in _import_time_nodes(top)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out: dict[int, list[str]] = {}
    for node in tree.body:
        names = _bound(node)
        if names and not set(names) & import_time and set(names) & used:
            out[node.lineno] = names
    return out


def _guarded(statement: cst.SimpleStatementLine, names: list[str]) -> cst.Try:
    """``try: <import> except ImportError: <name> = None ...``; the TODO comments stay on the import (where the
    rule that wrote them finds them on the next run), the other leading lines go above the `try:`."""
    todo = [e for e in statement.leading_lines if e.comment and "TODO(ascend-port)" in e.comment.value]
    kept = [e for e in statement.leading_lines if e not in todo]
    none = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))], cst.Name("None"))]) for n in names]
    header = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(EXCEPT_COMMENT))
    return cst.Try(
        body=cst.IndentedBlock([statement.with_changes(leading_lines=todo)]),
        handlers=[cst.ExceptHandler(body=cst.IndentedBlock(none, header=header), type=cst.Name("ImportError"))],
        leading_lines=kept,
    )


def guard_imports(text: str, tree: ast.Module, keep: Set[int] = frozenset()) -> tuple[str, list[int]]:
    """``text`` with its guardable imports guarded (but those at the lines ``keep``), and their lines in ``text``."""
    lines = {line: names for line, names in _guardable(tree).items() if line not in keep}
    if not lines:
        return text, []
    module = cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = module.resolve(PositionProvider)
    body: list[cst.BaseStatement] = []
    done: list[int] = []
    header = list(module.module.header)
    for statement in module.module.body:
        names = None
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            start = positions[statement.body[0]].start.line
            names = lines.get(start)
        if names and isinstance(statement, cst.SimpleStatementLine):
            done.append(start)
            if not body:  # the TODOs above the first statement are the module's header: they go with the import
                todos = _trailing_todos(header)
                header = header[: len(header) - len(todos)]
                statement = statement.with_changes(leading_lines=[*todos, *statement.leading_lines])
            statement = _guarded(statement, names)
        body.append(statement)
    return module.module.with_changes(header=header, body=body).code, done


def _trailing_todos(lines: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
    count = 0
    while (
        count < len(lines)
        and (comment := lines[len(lines) - 1 - count].comment)
        and "TODO(ascend-port)" in comment.value
    ):
        count += 1
    return lines[len(lines) - count :]


class ImportGuardTransformer(PortTransformer):
    """NPU411. Has no statement-level work: everything happens in ``finish``."""

    RULES = (GUARD,)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if not ctx.selection.enabled(GUARD) or not CANDIDATE.search(text) or ctx.reports_only():
            return text
        new_tree = tree()
        before = ctx.module()
        originals = {ast.dump(n): n.lineno for n in (before.body if before else ()) if _bound(n)}
        # (an import a `# ascend-port: ignore` comment covers stays as it is, and so does one of the project's own
        # package: Liger-Kernel's modules import liger_kernel)
        own = set(ctx.options.own_packages)
        keep = {
            n.lineno
            for n in new_tree.body
            if ctx.suppressed(GUARD, line=originals.get(ast.dump(n), -1)) or own & _packages(n)
        }
        new_text, done = guard_imports(text, new_tree, keep)
        # The findings go on the import's line before the port: the same statement at the top of the original.
        ported = {n.lineno: ast.dump(n) for n in new_tree.body if n.lineno in done}
        for line in done:
            message = "import guarded (try/except ImportError: its names are None): only their users fail on NPU"
            ctx.findings.append(Finding(GUARD, originals.get(ported[line], line), message, applied=True))
        return new_text
