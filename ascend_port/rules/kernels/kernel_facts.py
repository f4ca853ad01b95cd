"""What NPU500 reads before it writes a kernel's TODOs: of the whole module (is it already an Ascend kernel module,
which kernels it launches, which jit functions are device helpers) and of each kernel (cube or vector, tiles,
tuning, the tensors its int64 math builds), so that a note on one line may depend on another."""

from __future__ import annotations

import ast
from collections.abc import Mapping

import libcst as cst

from ascend_port.python.module_facts import ModuleFacts
from ascend_port.rules.kernels.arguments import _keyword
from ascend_port.rules.kernels.tables import ASCEND_LIBDEVICE_PACKAGES, TL, TRITON_DECORATORS, as_triton

# Triton-Ascend-only modules: a module that imports them (outside the portable libdevice try-import NPU501 and
# torch_npu write) is already an Ascend kernel module (fla's `backends/triton_ascend/`, vllm-ascend's ops).
ASCEND_TRITON_MODULES = (*ASCEND_LIBDEVICE_PACKAGES, "triton.backends.ascend")
# Triton-Ascend-only kernel APIs (3.2.0 patches them into `tl`) and arguments: not valid GPU Triton.
ASCEND_ONLY_TL = {"insert_slice", "extract_slice", "get_element", "multibuffer"}
ASCEND_ONLY_KEYWORDS = {"care_padding"}


def _ast_qualified(node: ast.expr, aliases: Mapping[str, str]) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def _ascend_import(node: ast.Import | ast.ImportFrom, in_try: bool) -> bool:
    """Does this import name a Triton-Ascend-only module? A libdevice import inside a try statement is the
    portable try-import (NPU501's, torch_npu's) that GPU code has too."""
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        names = [f"{module}.{a.name}" for a in node.names]
    else:
        names = [a.name for a in node.names]
    hits = [
        n for n in names if n.startswith(tuple(m + "." for m in ASCEND_TRITON_MODULES)) or n in ASCEND_TRITON_MODULES
    ]
    return any(not (in_try and "libdevice" in n.split(".")) for n in hits)


def kernel_module_facts(tree: ast.Module, aliases: Mapping[str, str]) -> tuple[bool, set[str], set[str]]:
    """What NPU500 reads from the whole module: (is it already an Ascend kernel module, the names launched as
    ``name[grid](...)`` (or ``obj.name[grid](...)``), the names called from inside Triton kernels: device helpers)."""
    ascend = False
    launched: set[str] = set()
    helpers: set[str] = set()
    tries = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for s in t.body for n in ast.walk(s)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _ascend_import(node, id(node) in tries):
            ascend = True
        elif isinstance(node, ast.Attribute) and node.attr in ASCEND_ONLY_TL:
            ascend |= _ast_qualified(node.value, aliases) == TL
        elif isinstance(node, ast.Call):
            ascend |= any(k.arg in ASCEND_ONLY_KEYWORDS for k in node.keywords) or any(
                k.arg == "input_precision" and isinstance(k.value, ast.Constant) and k.value.value == "hf32"
                for k in node.keywords
            )
            # `kernel[grid](...)`, `self.kernel[grid](...)`, `kernel.run(..., grid=...)`
            func = node.func
            target = func.value if isinstance(func, ast.Subscript) else None
            if isinstance(func, ast.Attribute) and func.attr == "run" and isinstance(func.value, ast.Name):
                target = func.value
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name:
                launched.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            as_triton(_ast_qualified(d.func if isinstance(d, ast.Call) else d, aliases)) in TRITON_DECORATORS
            for d in node.decorator_list
        ):
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and call is not node:
                    func = call.func
                    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                    if name and not _ast_qualified(func, aliases).startswith("triton."):
                        helpers.add(name)
    return ascend, launched, helpers


def _kernel_module_facts(facts: ModuleFacts) -> tuple[bool, set[str], set[str]]:
    tree = facts.tree
    return kernel_module_facts(tree, facts.imports.aliases) if tree is not None else (False, set(), set())


class _KernelScan(cst.CSTVisitor):
    """What a whole kernel holds, read before its lines are (a note on one line may depend on another line)."""

    def __init__(self, resolve) -> None:
        super().__init__()
        self.qualified = resolve  # the module's qualified name of an expression (ImportIndex.resolve)
        self.dot = False  # uses tl.dot: a cube (AI core) kernel
        self.memory = False  # uses tl.load/tl.store (which Triton-Ascend cannot mix with tensor descriptors)
        self.tiles: list[str] = []  # the constexpr block sizes of its tl.arange calls
        self.tuning = False  # num_warps/num_stages in its triton.Config list
        self.lhs: set[str] = set()  # names seen so far as tl.dot's left operand (filled while its lines are read)
        self.vectors: set[str] = set()  # names assigned a tensor (built from tl.arange/tl.load/...)
        self.returns = False  # returns a value: a device function (a launched kernel returns nothing)
        self.branches: list[tuple[cst.If, set[str], set[str]]] = []  # open ifs: (node, lhs before, lhs of branches)

    def visit_Return(self, node: cst.Return) -> None:
        self.returns |= node.value is not None

    def visit_Assign(self, node: cst.Assign) -> None:
        if _builds_vector(node.value, self.qualified, self.vectors):
            self.vectors |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node.func) or ""
        self.dot |= qualified == f"{TL}.dot"
        self.memory |= qualified in (f"{TL}.load", f"{TL}.store")
        if qualified == f"{TL}.arange" and len(node.args) >= 2 and isinstance(end := node.args[1].value, cst.Name):
            if end.value not in self.tiles:
                self.tiles.append(end.value)
        if qualified in ("triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"):
            self.tuning |= bool(_keyword(node, "num_warps") or _keyword(node, "num_stages"))


# (a tl.load is a tensor when its pointer is: the Finder below sees the names and calls of its arguments too)
VECTOR_MAKERS = {f"{TL}.{name}" for name in ("arange", "zeros", "full")}


def _builds_vector(expr: cst.BaseExpression, resolve, vectors: set[str]) -> bool:
    """Is ``expr`` built from a tensor (tl.arange, tl.zeros, a name assigned one): its int64 math is vector math,
    which Triton-Ascend runs as scalar code (a program id's int64 math is scalar anyway)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append((resolve(node.func) or "") in VECTOR_MAKERS)

        def visit_Name(self, node: cst.Name) -> None:
            found.append(node.value in vectors)

    expr.visit(Finder())
    return any(found)
