"""What NPU502 reads of a module before its transformer runs: the names bound to a CUDA extension (a JIT build, an
import of a compiled module named for CUDA), the operator namespaces it defines in Python, and the call sites of
extension ops that name no trigger (KernelTransformer.option_triggers). Plain ``ast`` and text, no LibCST."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping

from ascend_port.core.options import PortOptions
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.scopes import Scope, statement

CPP_EXTENSION = "torch.utils.cpp_extension"
CUDA_SOURCE = re.compile(r"\.(cu|cuh)$")
# A compiled extension module named for CUDA (`import selective_scan_cuda`, `fused_layer_norm_cuda`): what
# setup.py's CUDAExtension builds. (Roots that are libraries with rules of their own are not extensions.)
EXTENSION_MODULE = re.compile(r"^[A-Za-z0-9]\w*_cuda(?:_ext|_ops|_kernels?|_lib|_backend)?$")
NOT_EXTENSIONS = {"torch", "triton", "cuda", "cupy", "numba", "pycuda", "nvidia", "jax", "tensorflow"}
# Operator namespaces of torch, torch_npu and the libraries that ship their own kernels: not a project's ops.
BUILTIN_OP_NAMESPACES = {
    "aten",
    "prims",
    "prim",
    "npu",
    "c10d",
    "c10d_functional",
    "_c10d_functional",
    "_c10d_functional_autograd",
    "_dtensor",
    "profiler",
    "quantized",
    "quantized_decomposed",
    "_quantized",
    "higher_order",
    "inductor",
    "mkldnn",
    "onednn",
    "symm_mem",
    "torchvision",
    "torchaudio",
    "fbgemm",
    "debugprims",
    "rngprims",
    # other devices' own operators (their code paths are not the NPU's)
    "hpu",
    "torch_mlu",
    "mlu",
    "sdaa",
    "xpu",
    "musa",
    "torch_ipex",
    "ipex",
}
# "ns::op" or a Library("ns", ...) in the module: an operator defined in Python (torch.library), not in CUDA.
_PYTHON_OP = re.compile(r"^(\w+)::\w+")


def python_op_namespaces(calls: Iterable[ast.Call]) -> set[str]:
    """The operator namespaces a module registers from Python (``calls``: its calls): ``torch.library.custom_op(
    "ns::op")``, ``define("ns::op(...)")``, ``Library("ns", "DEF")``; their ops run wherever their Python runs."""
    found = set()
    for node in calls:
        if not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "Library":
            found.add(first.value)
        elif m := _PYTHON_OP.match(first.value):
            found.add(m.group(1))
    return found


def _ast_builds_cuda(call: ast.Call) -> bool:
    """The ``ast`` twin of KernelTransformer._builds_cuda: a JIT build with CUDA sources or flags."""
    for keyword in call.keywords:
        if keyword.arg in ("cuda_sources", "extra_cuda_cflags"):
            return not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
        if keyword.arg == "with_cuda":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value is True
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and CUDA_SOURCE.search(node.value)
        for node in ast.walk(call)
    )


def extension_modules(aliases: Mapping[str, str], assignments: Iterable[ast.Assign]) -> dict[str, str]:
    """Local name -> extension name, for the names bound to a CUDA extension: the result of a JIT build of CUDA
    sources (``ops = load("ops", ["ops.cu"])``, among a module's ``assignments``) and an import of a compiled
    module named for CUDA."""
    found = {}
    for local, qualified in aliases.items():
        parts = qualified.split(".")
        if parts[0] in NOT_EXTENSIONS:
            continue
        # `import selective_scan_cuda`, `from mamba_ssm import selective_scan_cuda`, `from fused_cuda import fwd`
        module = next((".".join(parts[: i + 1]) for i, p in enumerate(parts) if EXTENSION_MODULE.search(p)), None)
        if module is not None:
            found[local] = module
    loaders = {f"{CPP_EXTENSION}.load", f"{CPP_EXTENSION}.load_inline"}
    for node in assignments:
        if not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        base = aliases.get(func.id) if isinstance(func, ast.Name) else None
        if base and ".".join([base, *reversed(parts)]) in loaders and _ast_builds_cuda(node.value):
            found.update({t.id: t.id for t in node.targets if isinstance(t, ast.Name)})
    return found


def _extension_modules(facts: ModuleFacts) -> dict[str, str]:
    # A JIT build is a call of torch.utils.cpp_extension's: a module that never says so builds none (most modules,
    # which are then not parsed beyond their head for it).
    builds = not facts.text or "cpp_extension" in facts.text
    return extension_modules(facts.imports.aliases, facts.statements(ast.Assign) if builds else ())


def _python_op_namespaces(facts: ModuleFacts) -> set[str]:
    return python_op_namespaces(facts.nodes(ast.Call))


def extension_op_site(
    qualified: str | None,
    code: Callable[[], str],
    base: str | None,
    called_itself: bool,
    extensions: Mapping[str, str],
    project_ops: Mapping[str, Mapping[str, str]],
    python_ops: Callable[[], set[str]],
) -> str | None:
    """What NPU502 says of a call of an op of a CUDA extension (``selective_scan_cuda.fwd(...)``, ``ops.scale(...)``
    after a JIT build, ``torch.ops.my_ns.my_op(...)``), else None. ``qualified``: the called expression resolved
    through the module's imports; ``code``: its source (asked only of an op call); ``base``: the name it starts
    with (None: it does not start with a name); ``called_itself``: the call calls that name itself;
    ``extensions``: the module's extension_modules; ``project_ops``: the project's extensions' ops
    (PortOptions.extension_op_map);
    ``python_ops``: the operator namespaces the module defines in Python (python_op_namespaces; asked only of a
    call of torch.ops: it reads all the module's calls)."""
    parts = (qualified or "").split(".")
    if (
        len(parts) >= 4
        and parts[:2] == ["torch", "ops"]
        and parts[2] not in BUILTIN_OP_NAMESPACES
        and parts[2] not in python_ops()
    ):
        where = project_ops.get(f"torch.ops.{parts[2]}", {}).get(parts[3]) or "the project's C++/CUDA sources"
        return (
            f"torch.ops.{parts[2]}.{parts[3]} is a custom operator (TORCH_LIBRARY in {where}): give it an NPU "
            "kernel (an Ascend C operator registered for PrivateUse1) or replace it with torch/torch_npu ops"
        )
    if qualified and (found := _project_module(qualified, project_ops)) is not None:
        module, name = found
        binding = project_ops[module].get(name)
        return (
            f"{code()}() is an op of the CUDA extension {module}{f' (bound in {binding})' if binding else ''}: it has "
            "no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops"
        )
    extension = extensions.get(base) if base is not None else None
    if extension is None or (called_itself and extension in (base, qualified)):
        # Calling the module itself is no op call: a compiled extension is a module, its ops its attributes;
        # a called name imported for CUDA (`from utils import move_to_cuda`) is the project's own function.
        return None
    return (
        f"{code()}() is an op of the CUDA extension {extension}: it has no NPU build; port its kernel to an Ascend C "
        "operator or replace the call with torch/torch_npu ops"
    )


def _project_module(qualified: str, modules: Iterable[str]) -> tuple[str, str] | None:
    """(extension module, op) when ``qualified`` names an op of one of the project's extensions."""
    for module in modules:
        if not module.startswith("torch.ops.") and qualified.startswith(module + "."):
            return module, qualified[len(module) + 1 :].split(".")[0]
    return None


# One import statement: `from X import a as b, c` (parenthesized over lines too) or `import X.y as z, w`.
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))", re.MULTILINE
)


def _jit_build_names(text: str) -> set[str]:
    """The names a module's text assigns the result of a call of torch.utils.cpp_extension's ``load`` or
    ``load_inline`` (``ops = load("ops", ["ops.cu"])``, ``ext = cpp_extension.load(...)``, a loader imported under
    another name): a superset of the JIT builds extension_modules finds in the tree, whose op calls (``ops.scale(x)``)
    name no trigger."""
    if "cpp_extension" not in text:
        return set()
    loaders = {"load", "load_inline"}
    for match in _IMPORT_LINE.finditer(text):
        if match.group(1) and match.group(1).endswith("cpp_extension"):
            for item in (i.split() for i in match.group(2).strip().strip("()").split(",")):
                if len(item) == 3 and item[0] in loaders and item[1] == "as":
                    loaders.add(item[2])
    assigned = re.compile(
        r"((?:\b\w+[ \t]*=[\s\\]*)+)\(?\s*(?:[\w.\s]*\.\s*)?\b(?:" + "|".join(sorted(loaders)) + r")\s*\("
    )
    return {name for match in assigned.finditer(text) for name in re.findall(r"\w+", match.group(1))}


def extension_call_sites(text: str, options: PortOptions) -> list[tuple[int, Scope]]:
    """Trigger matches for the call sites of what a module imports from a CUDA extension (``from x_cuda import
    fwd``; ``fwd(x)``, or ``import pkg._C as ext``; ``ext.op(x)`` for a module the project's C++ binds) and of what
    it builds with a JIT build (``ops = load(...)``; ``ops.scale(x)``): the call line itself names no trigger, and
    which names are the extension's depends on the module's imports and assignments."""
    modules = [m for m in options.extension_op_map if not m.startswith("torch.ops.")]
    names = _jit_build_names(text)
    if not names and "_cuda" not in text and not any(m.rsplit(".", 1)[-1] in text for m in modules):
        return []  # (most modules: one search)

    def extension(qualified: str) -> bool:
        parts = qualified.split(".")
        return _project_module(qualified + ".", modules) is not None or (
            parts[0] not in NOT_EXTENSIONS and any(EXTENSION_MODULE.search(p) for p in parts)
        )

    for match in _IMPORT_LINE.finditer(text):
        items = (match.group(2) or match.group(3)).strip().strip("()").split(",")
        for item in (i.split() for i in items):
            if not item or (len(item) != 1 and (len(item) != 3 or item[1] != "as")):
                continue
            imported = f"{match.group(1)}.{item[0]}" if match.group(1) else item[0]
            if extension(imported):
                names.add(item[-1] if len(item) == 3 or match.group(1) else imported)
    if not names:
        return []
    calls = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b(?:\s*\.\s*\w+)*\s*\(")
    return [(m.start(), statement) for m in calls.finditer(text)]
