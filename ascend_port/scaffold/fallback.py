"""The project's own pure-torch version of an op, where it ships one beside the extension (``causal_conv1d_ref``
beside ``causal_conv1d_cuda.causal_conv1d_fwd``, ``selective_scan_ref`` beside ``selective_scan_cuda.fwd``): a
top-level function of a call site's module or of a module beside it, named for the op with a reference word
(``ref``, ``naive``, ``torch``, ``fallback``...), or called where the import of the extension failed. Its source is
copied into the scaffold's ``reference.py`` with what it uses of its module, so that the reference runs without the
project's CUDA imports; its docstring's shapes (``x: (batch, dim, seqlen)``) size the test's inputs."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ascend_port.scaffold.ops import ExtensionOp
from ascend_port.scaffold.signature import DIM

REFERENCE_WORDS = {"ref", "reference", "naive", "native", "torch", "pytorch", "fallback", "python", "slow", "cpu"}
# Words that name no computation: an op named `fwd` is found by its module's name (`selective_scan_cuda`).
GENERIC_WORDS = {"cuda", "fwd", "forward", "fn", "func", "function", "op", "ops", "ext", "kernel", "impl", "c", "cpp"}
BACKWARD_WORDS = {"bwd", "backward", "grad", "grads"}


@dataclass(frozen=True)
class Fallback:
    """A pure-torch function of the project that computes what the op computes."""

    name: str
    file: str  # relative to the project
    line: int
    params: tuple[str, ...]
    source: str  # the function and what it needs of its module, ready to paste into a module
    imports: tuple[str, ...]  # the import statements of its module that it uses
    shapes: dict[str, tuple[str, ...]]  # parameter (and `out`) -> dimensions, from its docstring


def words(name: str) -> set[str]:
    return {w for w in name.lower().split("_") if w}


def op_words(op: ExtensionOp) -> set[str]:
    """What the op computes, in words: its name's and its module's, less the generic ones."""
    module = op.module.rsplit(".", 1)[-1]
    return (words(op.name) | words(module)) - GENERIC_WORDS


def is_backward(op: ExtensionOp) -> bool:
    return bool(words(op.name) & BACKWARD_WORDS)


def find_fallback(top: Path, op: ExtensionOp) -> Fallback | None:
    """The best pure-torch candidate for ``op`` among the modules of its call sites and the modules beside them;
    None for a backward op (its reference is the forward's gradient) or where no function fits."""
    if is_backward(op):
        return None
    wanted = op_words(op)
    folders = {(top / site.file).parent for site in op.call_sites}
    best: tuple[float, Path, ast.FunctionDef, ast.Module] | None = None
    for folder in sorted(folders):
        for path in sorted(folder.glob("*.py")):
            tree = _parse(path)
            if tree is None:
                continue
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef):
                    continue
                named = words(node.name)
                if not named & REFERENCE_WORDS or named & BACKWARD_WORDS:
                    continue
                stem = named - REFERENCE_WORDS - GENERIC_WORDS
                score = len(stem & wanted) - 0.5 * len(stem - wanted)
                if stem & wanted and (best is None or score > best[0]):
                    best = (score, path, node, tree)
    if best is None:
        return None
    _, path, node, tree = best
    source, imports = _copy(path.read_text("utf-8", errors="replace"), tree, node)
    return Fallback(
        node.name,
        path.relative_to(top).as_posix(),
        node.lineno,
        tuple(a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]),
        source,
        imports,
        {**unpacked_shapes(node), **docstring_shapes(ast.get_docstring(node) or "")},
    )


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def docstring_shapes(doc: str) -> dict[str, tuple[str, ...]]:
    """``name: (batch, dim, seqlen)`` and ``name: r(B D L) or c(B D L)`` lines of a docstring (the first real
    alternative), for shapes whose every dimension is a name or a name plus or minus a number."""
    shapes: dict[str, tuple[str, ...]] = {}
    for line in doc.splitlines():
        match = re.match(r"^\s*(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$", line)
        if match is None or match.group(1) in shapes:
            continue
        alternatives = re.findall(r"(?<![\w])([rc]?)\(([^()]*)\)", match.group(2))
        chosen = next((dims for kind, dims in alternatives if kind != "c"), None)
        if chosen is None:
            continue
        dims = [d for d in re.split(r",\s*|\s+(?![+-])(?<![+-]\s)", chosen.strip()) if d.strip()]
        if dims and all(DIM.match(d) for d in dims):
            shapes[match.group(1)] = tuple(" ".join(d.split()) for d in dims)
    return shapes


def unpacked_shapes(function: ast.FunctionDef) -> dict[str, tuple[str, ...]]:
    """Parameter -> its dimensions as the function unpacks them (``_, channel, in_h, in_w = input.shape``,
    ``dim, width = weight.size()``): the first unpacking of each; ``_`` and a starred name get a name of their own."""
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    shapes: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple | ast.List)):
            continue
        value = node.value.func if isinstance(node.value, ast.Call) and not node.value.args else node.value
        if not (
            isinstance(value, ast.Attribute) and value.attr in ("shape", "size") and isinstance(value.value, ast.Name)
        ):
            continue
        name = value.value.id
        targets = node.targets[0].elts
        if name in params and name not in shapes and all(isinstance(t, ast.Name) for t in targets):
            dims = [t.id for t in targets if isinstance(t, ast.Name)]
            shapes[name] = tuple(f"{name}_dim{i}" if d == "_" else d for i, d in enumerate(dims))
    return shapes


def _copy(text: str, tree: ast.Module, function: ast.FunctionDef) -> tuple[str, tuple[str, ...]]:
    """The source of ``function`` and of the module-level definitions it uses (transitively, in module order), and
    the module's import statements it uses."""
    lines = text.splitlines()
    defined: dict[str, ast.stmt] = {}
    imports: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined[node.name] = node
        elif isinstance(node, ast.Assign):
            defined.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                imports[(alias.asname or alias.name).split(".")[0]] = node
    needed: list[ast.stmt] = []
    pending: list[ast.stmt] = [function]
    while pending:
        node = pending.pop()
        if any(node is n for n in needed):
            continue
        needed.append(node)
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        pending += [defined[name] for name in sorted(used) if name in defined]
    order = {id(n): i for i, n in enumerate(tree.body)}
    needed.sort(key=lambda n: order[id(n)])
    used = {n.id for node in needed for n in ast.walk(node) if isinstance(n, ast.Name)}
    chosen = []
    for name, node in imports.items():
        if name in used and node not in chosen:
            chosen.append(node)
    chosen.sort(key=lambda n: order[id(n)])

    def segment(node: ast.stmt) -> str:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "\n".join(lines[start - 1 : node.end_lineno])

    return "\n\n\n".join(segment(n) for n in needed), tuple(segment(n) for n in chosen)
