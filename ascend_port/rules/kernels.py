"""NPU500-NPU502, NPU507: custom kernels. Triton kernels, Triton's libdevice and device, and C++/CUDA extensions
built by torch.

No tool translates a GPU kernel into an NPU kernel, so most of this domain only says where the manual work is and
what the way forward is. A kernel's code is never changed here: a TODO goes above the decorators of a kernel that is
work, and one on each of its lines that needs a change. The changes that are mechanical on Triton-Ascend (where
libdevice lives, how launch code finds the device) are made outside kernels; rules/triton_kernels.py makes those
inside kernels.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

import libcst as cst

from ascend_port.core.catalogue import Confidence, declared, rule
from ascend_port.core.findings import todo_comment
from ascend_port.core.options import PortOptions
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import build_dotted, dotted, names_in
from ascend_port.python.scopes import Scope, Trigger, statement
from ascend_port.python.transformer import ALL_OTHERS, PortTransformer

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

TRITON_KERNEL = rule(
    "NPU500",
    "triton-kernel",
    LOW,
    "A Triton kernel that is work: one TODO above it (grid, cores, tiles, a torch_npu operator that may do the "
    "same) and one on each of its lines that Triton-Ascend needs changed.",
    """
    Triton kernels run on Ascend NPUs with Triton-Ascend (`pip install triton-ascend`, which replaces community
    `triton`: they cannot be installed together), but the launch and some lines need a review. Above a kernel
    that the module launches (`kernel[grid](...)`, `kernel.run(...)`), or that it never launches or calls (then
    another module may: the TODO says so), one TODO says how to launch it: at most 65535 programs per launch,
    best one per AI core (`num_aicore`, for a kernel with `tl.dot`) or vector core (`num_vectorcore`) looping
    over the work; its tiles (the `tl.arange` sizes) fit in the 192 KB on-chip buffer; when its name says what it
    computes and torch_npu has a fused operator for it (`npu_rms_norm`, `npu_rotary_mul`, `npu_swiglu`,
    `npu_fusion_attention`, ...) the TODO names it; `num_warps`/`num_stages` are ignored. A device function (a
    jit function that returns a value, or that the module's kernels call and never launch) gets none: it is
    inlined. Each line that needs a change gets its own TODO: `tl.float64` (no fp64), int64 math on tensors
    (scalar code on Ascend), atomics with `sem`/`scope` other than `acq_rel`/`gpu`, PTX inline asm
    (`tl.inline_asm_elementwise`), tensor descriptors mixed with `tl.load`/`tl.store`, a tile that is the left
    operand of two `tl.dot`s (Triton-Ascend may clobber it), a `tl.dot` precision chosen at run time, libdevice
    functions Triton-Ascend lacks. `allow_tf32=False` is valid there. A module that is already an Ascend port
    (it imports Triton-Ascend-only APIs such as `triton.language.extra.cann.extension`, uses `care_padding` or
    `hf32`, or lies in an NPU backend folder such as `backends/triton_ascend/`) gets no TODO. The kernel's code
    is never changed here (the rules of rules/triton_kernels.py rewrite what is mechanical).

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _rms_norm_fwd(X, Y, eps, N: tl.constexpr):
            x = tl.load(X + tl.program_id(0) * N + tl.arange(0, N)).to(tl.float64)
            tl.store(Y + tl.arange(0, N), x * tl.rsqrt(tl.sum(x * x, 0) / N + eps))


        def rms_norm(x, y):
            _rms_norm_fwd[(x.shape[0],)](x, y, 1e-6, N=x.shape[1])
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] Triton kernel _rms_norm_fwd: for Triton-Ascend (it replaces triton) launch ...
        @triton.jit
        def _rms_norm_fwd(X, Y, eps, N: tl.constexpr):
            # TODO(ascend-port): NPU500 [low] tl.float64: Ascend A2/A3 have no fp64 vector or cube math: ...
            x = tl.load(X + tl.program_id(0) * N + tl.arange(0, N)).to(tl.float64)
            tl.store(Y + tl.arange(0, N), x * tl.rsqrt(tl.sum(x * x, 0) / N + eps))


        def rms_norm(x, y):
            _rms_norm_fwd[(x.shape[0],)](x, y, 1e-6, N=x.shape[1])
    """,
)
TRITON_LIBDEVICE = rule(
    "NPU501",
    "triton-libdevice",
    MEDIUM,
    "CUDA's Triton libdevice import -> Triton-Ascend's (`extra.cann`, then `extra.ascend`), keeping CUDA as the "
    "fallback.",
    """
    Triton-Ascend has no `triton.language.extra.cuda`, and its backend does not remap the generic
    `triton.language.extra.libdevice` stubs. Its own libdevice is `triton.language.extra.cann.libdevice`
    (3.2.1 and later) or `triton.language.extra.ascend.libdevice` (the 3.2.0 wheel); torch_npu imports them the
    same way, newest first. The original import stays as the last fallback so the module still runs on CUDA.
    Only 46 of CUDA libdevice's functions exist in both (exp, log, tanh, erf, pow, rsqrt, ...): a name imported
    directly that is not among them keeps the import unchanged, and the kernel's NPU500 TODO names the functions
    it calls that are missing. Review: the Ascend functions cover fp32/fp16 (sometimes bf16), not fp64.

    Before:
        from triton.language.extra.cuda import libdevice
    After:
        try:
            from triton.language.extra.cann import libdevice
        except ImportError:
            try:
                from triton.language.extra.ascend import libdevice
            except ImportError:
                from triton.language.extra.cuda import libdevice
    """,
)
CUDA_EXTENSION = rule(
    "NPU502",
    "cuda-extension",
    LOW,
    "`CUDAExtension`, `load`/`load_inline` with CUDA sources, `BuildExtension` and the calls of the extension's ops: "
    "TODO, the .cu code needs a port.",
    """
    There is no nvcc for NPUs and no tool that turns CUDA kernels into NPU kernels. Host C++ that only calls
    ATen builds for NPU with `torch_npu.utils.cpp_extension.NpuExtension` (a setuptools Extension that links
    torch_npu; the same module has a JIT `load`); the device code has to become Ascend C custom operators
    (scaffold them with msOpGen from a JSON prototype) registered with `TORCH_LIBRARY` or OpPlugin, or be
    replaced by torch/torch_npu ops. `ascend-port scan` lists every .cu/.cuh file with its kernels (NPU503), which
    is the size of that work. `CppExtension` alone gets no TODO, and `BuildExtension` gets one where a build uses
    it (`cmdclass=...`) in a module that builds CUDA sources. The Python call sites of the extension's ops get a
    TODO too: calls through the module a JIT build returns (`ops = load(..., sources=["k.cu"])`, then
    `ops.scale(x)`), through an imported compiled module named for CUDA (`selective_scan_cuda.fwd(...)`, or
    `from fused_cuda import fwd`, then `fwd(x)`), and of custom operators `torch.ops.<ns>.<op>` outside torch's,
    torch_npu's and other devices' namespaces and those the module defines in Python
    (`torch.library.custom_op("ns::op")`). A run over a project also reads its C++/CUDA sources: the ops that
    `PYBIND11_MODULE` and `TORCH_LIBRARY`/`TORCH_LIBRARY_IMPL(ns, CUDA, ...)` bind, under the module name
    setup.py's `CUDAExtension("pkg._C", ...)` gives them; a call of such an op through any import of that module
    (`import pkg._C as ext; ext.op(x)`, `from pkg import _C`) gets the TODO, which names the C++ file that binds it.

    Before:
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        ext_modules = [CUDAExtension("fused_ops", ["ops.cpp", "ops_kernel.cu"])]
        setup(name="fused_ops", ext_modules=ext_modules)
    After:
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        # TODO(ascend-port): NPU502 [low] CUDA extension fused_ops (1 .cu source): no nvcc on NPU: ...
        ext_modules = [CUDAExtension("fused_ops", ["ops.cpp", "ops_kernel.cu"])]
        setup(name="fused_ops", ext_modules=ext_modules)
    """,
    example_file="setup.py",
)
TRITON_ACTIVE_DEVICE = rule(
    "NPU507",
    "triton-active-device",
    MEDIUM,
    '`triton.runtime.driver.active.get_active_torch_device()` -> `torch.device("npu", torch.npu.current_device())`.',
    """
    Triton-Ascend's NPU driver has no `get_active_torch_device()` on its 3.2.0 wheel (later versions return the NPU
    device); Triton-Ascend's migration guide drops the call and uses the NPU device directly. The current NPU is
    the one Triton-Ascend launches on (its driver asks `torch.npu.current_device()`).

    Before:
        import torch
        import triton
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
    After:
        import torch
        import triton
        DEVICE = torch.device("npu", torch.npu.current_device())
    """,
)

TRITON_DECORATORS = {
    "triton.jit",
    "triton.autotune",
    "triton.heuristics",
    "triton.runtime.jit",
    "triton.runtime.autotune",
    "triton.runtime.heuristics",
    "triton.runtime.jit.jit",
    "triton.runtime.autotuner.autotune",
    "triton.runtime.autotuner.heuristics",
}
# The functions of CUDA's libdevice that Triton-Ascend's libdevice also has, on the 3.2.0 wheel and on main
# (triton-ascend.md, section 1.2). Anything else has to be ported by hand.
LIBDEVICE_ON_ASCEND = frozenset(
    """
    abs acos acosh asin asinh atan atan2 atanh ceil copysign cos cosh cyl_bessel_i0 div_rn div_rz erf erfinv exp exp2
    expm1 floor fma fmod hypot ilogb isinf isnan ldexp lgamma log log10 log1p log2 nearbyint nextafter pow round
    rsqrt signbit sin sinh sqrt sqrt_rn tan tanh trunc
""".split()
)
CUDA_LIBDEVICE_MODULES = ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice")
ASCEND_LIBDEVICE_PACKAGES = ("triton.language.extra.cann", "triton.language.extra.ascend")

# Kernel name -> an operator that does the same on NPU. Names are the evidence, hence "may already do this".
# torch_npu names are checked against the shipped API list by the tests.
KERNEL_EQUIVALENTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), op)
    for p, op in (
        (r"gemma.*rms", "torch_npu.npu_rms_norm on 1 + weight"),  # (npu_gemma_rms_norm has no backward)
        (r"rms_?norm", "torch_npu.npu_rms_norm"),
        (r"swiglu|swi_glu|silu_?(and_)?mul", "torch_npu.npu_swiglu"),
        (r"geglu|gelu_?(and_)?mul", "torch_npu.npu_geglu"),
        (r"rotary|rope", "torch_npu.npu_rotary_mul"),
        (r"top_?k_?top_?p", "torch_npu.npu_top_k_top_p"),
        (r"gated_?delta", "torch_npu.npu_chunk_gated_delta_rule"),
        (r"cross_?entropy", "torch_npu.npu_cross_entropy_loss"),
        (r"flash|attn|attention", "torch_npu.npu_fusion_attention"),
        (r"layer_?norm", "torch.nn.functional.layer_norm"),
        (r"group_?norm", "torch.nn.functional.group_norm"),
        (r"softmax", "torch.softmax"),
        (r"gelu", "torch.nn.functional.gelu"),
        (r"silu|swish", "torch.nn.functional.silu"),
        (r"matmul|gemm|(^|_)mm(_|$)", "torch.matmul"),
    )
)

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


def _kernel_module_facts(facts: ModuleFacts) -> tuple[bool, set[str], set[str]]:
    tree = facts.tree
    return kernel_module_facts(tree, facts.imports.aliases) if tree is not None else (False, set(), set())


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


# Forks of Triton that projects import in its place (`import triton_pre_mlir as triton`, MPT's and LLM Foundry's
# pre-MLIR Triton for their flash attention): their kernels are Triton kernels.
TRITON_FORKS = ("triton_pre_mlir",)


def as_triton(qualified: str | None) -> str | None:
    """``triton_pre_mlir.jit`` -> ``triton.jit``: a Triton fork's name as Triton's."""
    for fork in TRITON_FORKS:
        if qualified is not None and (qualified == fork or qualified.startswith(fork + ".")):
            return "triton" + qualified[len(fork) :]
    return qualified


def kernel_equivalent(name: str) -> str | None:
    lowered = name.lower()
    for pattern, op in KERNEL_EQUIVALENTS:
        if pattern.search(lowered):
            return op
    return None


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _positional(call: cst.Call, index: int) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index] if index < len(positional) else None


def _strings_in(node: cst.CSTNode) -> list[str]:
    """Every plain string literal inside ``node`` (list literals of sources, mostly)."""
    found: list[str] = []

    class Collector(cst.CSTVisitor):
        def visit_SimpleString(self, s: cst.SimpleString) -> None:
            if isinstance(value := s.evaluated_value, str):
                found.append(value)

    node.visit(Collector())
    return found


# The text that starts NPU500's TODO above a kernel (the kernel as a work item); its TODOs on a kernel's lines are
# ordinary TODOs (reports/model.py counts kernels by this).
KERNEL_TODO = "Triton kernel "


def is_kernel_todo(rule_id: str, message: str) -> bool:
    """Is this finding a Triton kernel to bring up (not a note on one of its lines)?"""
    return rule_id != TRITON_KERNEL.id or message.startswith(KERNEL_TODO)


# Triton-Ascend-only modules: a module that imports them (outside the portable libdevice try-import NPU501 and
# torch_npu write) is already an Ascend kernel module (fla's `backends/triton_ascend/`, vllm-ascend's ops).
ASCEND_TRITON_MODULES = (*ASCEND_LIBDEVICE_PACKAGES, "triton.backends.ascend")
# Triton-Ascend-only kernel APIs (3.2.0 patches them into `tl`) and arguments: not valid GPU Triton.
ASCEND_ONLY_TL = {"insert_slice", "extract_slice", "get_element", "multibuffer"}
ASCEND_ONLY_KEYWORDS = {"care_padding"}
TL = "triton.language"
UB_NOTE = "the 192 KB on-chip buffer (UB; half with double buffering)"


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


class KernelTransformer(PortTransformer):
    """NPU500-NPU502, NPU507: Triton kernels, Triton's libdevice import and device, and torch's C++/CUDA extension
    builders."""

    # It turns some import statements into try statements, which ends the others' handling of that node.
    RUNS_AFTER = (ALL_OTHERS,)

    # The last trigger matches on the `try:` line of a try statement that already imports Triton-Ascend's libdevice,
    # so that the whole try statement is parsed (the import inside it is then left alone, see visit_Try).
    # (Triton's names and torch's extension builders are reached through an import that names `triton` or
    # `cpp_extension`: a module without that text has none of them)
    TRIGGERS = (
        r"triton",
        r"cpp_extension",
        Trigger(
            r"@[ \t]*jit\b|\bjit\(|\bautotune\b|\bheuristics\b|libdevice|get_active_torch_device", also=("triton",)
        ),
        Trigger(
            r"CUDAExtension|BuildExtension|load_inline|extra_cuda_cflags|cuda_sources|with_cuda|\.cuh?[\"']",
            also=("cpp_extension",),
        ),
        r"try:[ \t]*(?:#[^\n]*)?\r?\n[ \t]*(?:from|import)[ \t]+triton\.language\.extra\.(?:cann|ascend)",
        # the call sites of CUDA extension ops through a custom op namespace, not torch's own or another library's
        # (and through a JIT build's result or an import: option_triggers)
        r"torch\.ops\.(?!(?:" + "|".join(sorted(BUILTIN_OP_NAMESPACES)) + r")\.)\w+\.",
    )
    RULES = (TRITON_KERNEL, TRITON_LIBDEVICE, CUDA_EXTENSION, TRITON_ACTIVE_DEVICE)
    # (read by port/python.py beside TRIGGERS: triggers that depend on the module's imports and the port options)
    option_triggers = staticmethod(extension_call_sites)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._import_parts: set[int] = set()  # names inside import statements are not uses
        self._attr_names: set[int] = set()  # the `.attr` Name of every Attribute: not a reference on its own
        self._ascend_try = 0  # inside a try statement that already imports Triton-Ascend's libdevice
        self._build_context = 0  # inside `cmdclass=...` or a `"build_ext": ...` entry
        self._kernels: list[_KernelScan | None] = []  # the functions being visited: a scan for each Triton kernel
        aliases = set(ctx.imports.aliases.values())
        # BuildExtension only matters when CUDA sources are built; a setup.py importing CppExtension and not
        # CUDAExtension builds host C++ only.
        self._cpp_only = (
            f"{CPP_EXTENSION}.CppExtension" in aliases
            and f"{CPP_EXTENSION}.CUDAExtension" not in aliases
            and f"{CPP_EXTENSION}.CUDA_HOME" not in aliases
        )

    # --- bookkeeping -------------------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        self._import_parts |= names_in(node)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._import_parts |= names_in(node)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attr_names.add(id(node.attr))
        if self._kernels and self._kernels[-1] is not None:
            self._kernel_attribute(node)

    # BuildExtension is flagged where a build uses it (`cmdclass={"build_ext": BuildExtension}`, `cmdclass=...`),
    # not where a helper merely returns it.
    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._build_context += _string(node.key) == "build_ext"

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        self._build_context -= _string(original.key) == "build_ext"
        return updated

    def visit_Arg(self, node: cst.Arg) -> None:
        self._build_context += node.keyword is not None and node.keyword.value == "cmdclass"

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        self._build_context -= original.keyword is not None and original.keyword.value == "cmdclass"
        return updated

    def visit_Try(self, node: cst.Try) -> None:
        self._ascend_try += _imports_ascend_libdevice(node)

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> cst.Try:
        self._ascend_try -= _imports_ascend_libdevice(original)
        return updated

    # --- NPU500: Triton kernels -------------------------------------------------------------------------------
    # One TODO above a kernel that is launched (in this module, or maybe from another one): the grid and the tiles.
    # None above a device helper (a jit function only called from kernels). One TODO on each line that needs a
    # specific change. Nothing in a module that is already an Ascend kernel module.

    def _facts(self) -> tuple[bool, set[str], set[str]]:
        return self.ctx.fact(_kernel_module_facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not any(self._is_triton_decorator(d.decorator) for d in node.decorators) or self._facts()[0]:
            self._kernels.append(None)  # (not a kernel, or one of an Ascend module: nothing to say)
            return
        scan = _KernelScan(self.ctx.imports.resolve)
        node.visit(scan)
        self._kernels.append(scan)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        scan = self._kernels.pop()
        if scan is None:
            return updated
        _, launched, helpers = self._facts()
        name = original.name.value
        if name not in launched and (name in helpers or scan.returns):
            return updated  # a device function: inlined into the kernels that call it (their TODOs cover it)
        where = "" if name in launched else ", launched outside this module (not here)"
        cores = "AI core (num_aicore: it uses tl.dot)" if scan.dot else "vector core (num_vectorcore)"
        message = (
            f"{KERNEL_TODO}{name}{where}: for Triton-Ascend (it replaces triton) launch it with at most 65535 "
            f"programs, best one per {cores} looping over the work"
        )
        if scan.tiles:
            message += f"; fit its tiles ({', '.join(scan.tiles)}) in {UB_NOTE}"
        if (op := kernel_equivalent(name)) is not None:
            message += f"; {op} may already do this"
        message += "; else an Ascend C operator"
        # (NPU515, when selected, collapses the configs: its port must not change this TODO on a second run)
        tuning = scan.tuning and not self._rewritten_by("triton-autotune-warps")
        checks = ["num_warps/num_stages are ignored"] if tuning else []
        forks = {
            fork
            for d in original.decorators
            for fork in TRITON_FORKS
            if (
                self.ctx.imports.resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
            ).startswith(fork + ".")
        }
        checks += [f"written for {fork}, an old Triton fork: port it to current Triton first" for fork in sorted(forks)]
        if checks:
            message += ". Check: " + "; ".join(checks)
        self.todo(TRITON_KERNEL, original.decorators[0], message)  # the line of the first decorator
        return updated

    def _is_triton_decorator(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return as_triton(self.ctx.imports.resolve(expr)) in TRITON_DECORATORS

    def _line_todo(self, node: cst.CSTNode, message: str) -> None:
        """A TODO on the statement of ``node`` inside a kernel (once per statement and message)."""
        if todo_comment(TRITON_KERNEL, message) in self.ctx.pending_todos():
            return
        self.todo(TRITON_KERNEL, node, message)

    def _rewritten_by(self, name: str) -> bool:
        """Does the enabled rule ``name`` (rules/triton_kernels.py) rewrite this construct instead of a TODO?"""
        return any(r.name == name and self.enabled(r) for r in declared().values())

    def _kernel_attribute(self, node: cst.Attribute) -> None:
        resolve = self.ctx.imports.resolve
        qualified, base, name = resolve(node) or "", resolve(node.value) or "", node.attr.value
        if qualified == f"{TL}.float64":
            self._line_todo(
                node,
                "tl.float64: Ascend A2/A3 have no fp64 vector or cube math: compute in fp32 where the precision "
                "allows, else keep this step on the host",
            )
        elif base.startswith("triton.") and base.endswith("libdevice") and name not in LIBDEVICE_ON_ASCEND:
            self._line_todo(
                node, f"libdevice.{name} is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops"
            )
        elif base in CUDA_LIBDEVICE_MODULES and isinstance(node.value, cst.Attribute):
            if not self._rewritten_by("triton-libdevice-chain"):
                self._line_todo(
                    node,
                    f"{dotted(node.value)} is not remapped on Triton-Ascend: call libdevice imported from "
                    "triton.language.extra.cann (NPU501's try-import)",
                )
        elif base.startswith("triton.language.extra.cuda") and "libdevice" not in (base + "." + name).split("."):
            self._line_todo(node, f"tl.extra.cuda.{name} does not exist on Triton-Ascend: write it with tl ops")

    def visit_Name(self, node: cst.Name) -> None:
        if not self._kernels or self._kernels[-1] is None or id(node) in self._attr_names:
            return
        qualified = self.ctx.imports.resolve(node) or ""
        if qualified.startswith(tuple(module + "." for module in CUDA_LIBDEVICE_MODULES)):
            name = qualified.rsplit(".", 1)[1]
            if name not in LIBDEVICE_ON_ASCEND:
                self._line_todo(
                    node, f"libdevice.{name} is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops"
                )

    # Branches of an `if` are exclusive: a tl.dot in the `else` reuses no tile of the `if` body's tl.dot.
    def visit_If(self, node: cst.If) -> None:
        if not self._kernels or (scan := self._kernels[-1]) is None:
            return
        if scan.branches and scan.branches[-1][0].orelse is node:  # an `elif`: a branch of the `if` above
            self._next_branch(scan)
        scan.branches.append((node, set(scan.lhs), set()))

    def visit_Else(self, node: cst.Else) -> None:
        if self._kernels and (scan := self._kernels[-1]) is not None and scan.branches:
            self._next_branch(scan)

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        if self._kernels and (scan := self._kernels[-1]) is not None and scan.branches:
            _, _, seen = scan.branches.pop()
            scan.lhs |= seen
        return updated

    @staticmethod
    def _next_branch(scan: _KernelScan) -> None:
        _, before, seen = scan.branches[-1]
        seen |= scan.lhs
        scan.lhs = set(before)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._kernels and (scan := self._kernels[-1]) is not None:
            # a new value: its next tl.dot is no reuse of the old tile
            scan.lhs -= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}

    def visit_Call(self, node: cst.Call) -> None:
        if not self._kernels or (scan := self._kernels[-1]) is None:
            return
        qualified = self.ctx.imports.resolve(node.func) or ""
        short = qualified.removeprefix(TL + ".")
        if qualified == f"{TL}.inline_asm_elementwise":
            self._line_todo(
                node,
                "tl.inline_asm_elementwise: PTX cannot run on Ascend (its asm must be the NPU's, registers int64/"
                "fp32, 1-D inputs): write it with tl ops",
            )
        elif short.startswith("atomic_") and (_keyword(node, "sem") or _keyword(node, "scope")):
            sem = _string(getattr(_keyword(node, "sem"), "value", None))
            scope = _string(getattr(_keyword(node, "scope"), "value", None))
            if sem not in (None, "acq_rel") or scope not in (None, "gpu") or sem is scope is None:
                given = ", ".join(f"{k}={v!r}" for k, v in (("sem", sem), ("scope", scope)) if v is not None)
                self._line_todo(
                    node,
                    f"tl.{short} {given}: Triton-Ascend documents only sem='acq_rel' and scope='gpu' (others "
                    "compile; their lowering is unverified): check it on the NPU",
                )
        elif qualified.rsplit(".", 1)[-1] in ("make_tensor_descriptor", "_experimental_make_tensor_descriptor"):
            if scan.memory:
                self._line_todo(
                    node,
                    "tensor descriptor (TMA): Triton-Ascend cannot mix tensor descriptors with tl.load/tl.store in "
                    "one kernel: use tl.make_block_ptr or pointers here, or descriptors for every access",
                )
        elif qualified == f"{TL}.dot":
            self._dot(node)
        elif short in ("cast", "to") or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"):
            self._int64(node)

    def _dot(self, node: cst.Call) -> None:
        precision = _keyword(node, "input_precision")
        tf32 = _keyword(node, "allow_tf32")
        for arg, must in ((precision, "'ieee' (or 'hf32' for fp32 inputs), never 'tf32'/'tf32x3'"), (tf32, "False")):
            if (
                arg is not None
                and isinstance(arg.value, (cst.Name, cst.Attribute))
                and dotted(arg.value) not in ("True", "False", "None")
            ):
                self._line_todo(
                    node,
                    f"tl.dot {arg.keyword.value if arg.keyword else ''}={dotted(arg.value)} is chosen at run time: on "
                    f"Ascend it must be {must}",
                )
        literal = _string(getattr(precision, "value", None))
        if (tf32 is not None and isinstance(tf32.value, cst.Name) and tf32.value.value == "True") or literal in (
            "tf32",
            "tf32x3",
        ):
            if (
                not self._rewritten_by("triton-dot-tf32")
                or literal == "tf32x3"
                and not self._rewritten_by("triton-dot-tf32x3")
            ):
                self._line_todo(
                    node, "tl.dot tf32: Triton-Ascend rejects allow_tf32/'tf32': use 'ieee' (or 'hf32' for fp32 inputs)"
                )
        lhs = node.args[0].value if node.args else None
        if isinstance(lhs, cst.Name):
            scan = self._kernels[-1]
            assert scan is not None
            if lhs.value in scan.lhs:
                self._line_todo(
                    node,
                    f"{lhs.value} is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a "
                    f"tl.dot's left operand, and a copy ({lhs.value} + 0.0) is merged away by 3.2.0's CSE: check "
                    f"this result on the NPU; if it differs, reload {lhs.value} from memory",
                )
            scan.lhs.add(lhs.value)

    def _int64(self, node: cst.Call) -> None:
        resolve = self.ctx.imports.resolve
        args = [a.value for a in node.args]
        receiver: cst.BaseExpression | None
        dtype: cst.BaseExpression | None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
            receiver, dtype = node.func.value, args[0] if args else None
        else:
            receiver, dtype = (args[0], args[1]) if len(args) >= 2 else (None, None)
        if (
            receiver is None
            or dtype is None
            or resolve(dtype) != f"{TL}.int64"
            or not _builds_vector(receiver, resolve, self._kernels[-1].vectors)  # type: ignore[union-attr]
        ):
            return
        self._line_todo(
            node,
            "int64 vector math: Triton-Ascend runs int64 vector add/compare as scalar code (correct, slow): keep "
            "this tensor int32 where it cannot overflow",
        )

    # --- NPU501: libdevice import ------------------------------------------------------------------------------

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(updated.body) != 1 or self._ascend_try:
            return updated
        small = updated.body[0]
        imported = self._cuda_libdevice_import(small)
        if imported is None:
            return updated
        chain = [_with_package(small, package) for package in ASCEND_LIBDEVICE_PACKAGES] + [small]
        replacement = _try_chain(chain, updated)
        return (
            self.fix(
                TRITON_LIBDEVICE,
                original,
                replacement,
                f"{imported} -> Triton-Ascend's libdevice (extra.cann, then extra.ascend; CUDA as fallback)",
            )
            or updated
        )

    def _cuda_libdevice_import(self, small: cst.BaseSmallStatement) -> str | None:
        """The module a CUDA libdevice import names, when it can be rerouted to Triton-Ascend."""
        if isinstance(small, cst.ImportFrom):
            return _cuda_libdevice_import_from(small)
        if isinstance(small, cst.Import) and len(small.names) == 1 and small.names[0].asname is not None:
            module = dotted(small.names[0].name)
            if module in CUDA_LIBDEVICE_MODULES:
                return module
        return None

    # --- NPU502: C++/CUDA extensions ---------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified == "triton.runtime.driver.active.get_active_torch_device" and not original.args:
            torch = self.ctx.imports.local_name_for("torch")
            if torch is None:
                return updated  # the module does not import torch: nothing to spell the device with
            replacement = cst.parse_expression(f'{torch}.device("npu", {torch}.npu.current_device())')
            return (
                self.fix(
                    TRITON_ACTIVE_DEVICE,
                    original,
                    replacement,
                    'get_active_torch_device() -> torch.device("npu", torch.npu.current_device())',
                )
                or updated
            )
        if qualified == f"{CPP_EXTENSION}.CUDAExtension":
            name = _string(getattr(_keyword(original, "name") or _positional(original, 0), "value", None))
            sources = _keyword(original, "sources") or _positional(original, 1)
            count = sum(1 for s in _strings_in(sources.value) if CUDA_SOURCE.search(s)) if sources else 0
            what = f"CUDA extension {name}" if name else "CUDA extension"
            if count:
                what += f" ({count} .cu source{'s' if count > 1 else ''})"
            self.todo(CUDA_EXTENSION, original, f"{what}: no nvcc on NPU: {self._extension_way()}")
        elif (site := self._extension_op(original.func, qualified)) is not None:
            self.todo(CUDA_EXTENSION, original, site)
        elif qualified in (f"{CPP_EXTENSION}.load", f"{CPP_EXTENSION}.load_inline") and self._builds_cuda(original):
            name = _string(getattr(_keyword(original, "name") or _positional(original, 0), "value", None))
            what = f"JIT CUDA extension {name}" if name else "JIT CUDA extension"
            self.todo(
                CUDA_EXTENSION,
                original,
                f"{what}: no nvcc on NPU: {self._extension_way()} (torch_npu.utils.cpp_extension.load for "
                "the host C++)",
            )
        return updated

    def _extension_op(self, func: cst.BaseExpression, qualified: str | None) -> str | None:
        """The TODO for a call of an op of a CUDA extension (``selective_scan_cuda.fwd(...)``, ``ops.scale(...)``
        after a JIT build, ``torch.ops.my_ns.my_op(...)``), else None."""
        parts = (qualified or "").split(".")
        if (
            len(parts) >= 4
            and parts[:2] == ["torch", "ops"]
            and parts[2] not in BUILTIN_OP_NAMESPACES
            and parts[2] not in self._python_ops()
        ):
            where = (
                self._project_ops().get(f"torch.ops.{parts[2]}", {}).get(parts[3]) or "the project's C++/CUDA sources"
            )
            return (
                f"torch.ops.{parts[2]}.{parts[3]} is a custom operator (TORCH_LIBRARY in {where}): give it an NPU "
                "kernel (an Ascend C operator registered for PrivateUse1) or replace it with torch/torch_npu ops"
            )
        if qualified and (found := _project_module(qualified, self._project_ops())) is not None:
            module, name = found
            binding = self._project_ops()[module].get(name)
            return (
                f"{cst.Module([]).code_for_node(func)}() is an op of the CUDA extension {module}"
                f"{f' (bound in {binding})' if binding else ''}: it has no NPU build; port its kernel to an Ascend C "
                "operator or replace the call with torch/torch_npu ops"
            )
        base = func
        while isinstance(base, cst.Attribute):
            base = base.value
        if not isinstance(base, cst.Name):
            return None
        extension = self.ctx.fact(_extension_modules).get(base.value)
        if extension is None or (base is func and extension == base.value):
            return None  # (calling the module itself is no op call)
        op = cst.Module([]).code_for_node(func)
        return (
            f"{op}() is an op of the CUDA extension {extension}: it has no NPU build; port its kernel to an Ascend C "
            "operator or replace the call with torch/torch_npu ops"
        )

    def _project_ops(self) -> dict[str, dict[str, str]]:
        return self.ctx.options.extension_op_map

    def _python_ops(self) -> set[str]:
        return self.ctx.fact(_python_op_namespaces)

    @staticmethod
    def _extension_way() -> str:
        return (
            "port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or "
            "replace them with torch/torch_npu ops; build the host C++ with "
            "torch_npu.utils.cpp_extension.NpuExtension"
        )

    @staticmethod
    def _builds_cuda(call: cst.Call) -> bool:
        for arg in call.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in ("cuda_sources", "extra_cuda_cflags"):
                return not (isinstance(arg.value, cst.Name) and arg.value.value == "None")
            if keyword == "with_cuda":
                return isinstance(arg.value, cst.Name) and arg.value.value == "True"
        return any(CUDA_SOURCE.search(s) for arg in call.args for s in _strings_in(arg.value))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) not in self._import_parts and id(original) not in self._attr_names:
            self._build_extension(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) not in self._import_parts:
            self._build_extension(original)
        return updated

    def _build_extension(self, node: cst.Name | cst.Attribute) -> None:
        if (
            self._cpp_only
            or not self._build_context
            or self.ctx.imports.resolve(node) != f"{CPP_EXTENSION}.BuildExtension"
        ):
            return
        self.todo(
            CUDA_EXTENSION,
            node,
            "BuildExtension compiles .cu sources with nvcc: on NPU build host C++ as "
            "torch_npu.utils.cpp_extension.NpuExtension (BuildExtension still works for it) and the CUDA "
            "kernels as Ascend C operators",
        )


def _cuda_libdevice_import_from(small: cst.ImportFrom) -> str | None:
    """``_cuda_libdevice_import`` for a ``from`` import: the libdevice module itself, or functions Ascend has."""
    if small.module is None or small.relative or isinstance(small.names, cst.ImportStar):
        return None
    module = dotted(small.module)
    if len(small.names) == 1:
        name = small.names[0].name
        if not isinstance(name, cst.Name):
            return None
        if module in ("triton.language.extra.cuda", "triton.language.extra") and name.value == "libdevice":
            return f"{module}.libdevice"
    names = [a.name.value for a in small.names if isinstance(a.name, cst.Name)]
    if module in CUDA_LIBDEVICE_MODULES and names and all(n in LIBDEVICE_ON_ASCEND for n in names):
        return module
    return None


def _imports_ascend_libdevice(node: cst.Try) -> bool:
    code = cst.Module([]).code_for_node(node.body)
    return any(package in code for package in ASCEND_LIBDEVICE_PACKAGES)


def _with_package(small: cst.BaseSmallStatement, package: str) -> cst.BaseSmallStatement:
    """The same import statement pointed at one of Triton-Ascend's libdevice packages."""
    if isinstance(small, cst.Import):
        alias = small.names[0]
        return small.with_changes(
            names=[alias.with_changes(name=build_dotted(f"{package}.libdevice"), comma=cst.MaybeSentinel.DEFAULT)]
        )
    assert isinstance(small, cst.ImportFrom) and small.module is not None
    module = dotted(small.module)
    new_module = f"{package}.libdevice" if module in CUDA_LIBDEVICE_MODULES else package
    return small.with_changes(module=build_dotted(new_module))


def _try_chain(chain: list[cst.BaseSmallStatement], original: cst.SimpleStatementLine) -> cst.Try:
    """try: chain[0] / except ImportError: try: chain[1] ... with the last one as the final fallback."""
    body: cst.BaseStatement = cst.SimpleStatementLine([chain[-1]], trailing_whitespace=original.trailing_whitespace)
    for small in reversed(chain[:-1]):
        body = cst.Try(
            body=cst.IndentedBlock([cst.SimpleStatementLine([small])]),
            handlers=[cst.ExceptHandler(body=cst.IndentedBlock([body]), type=cst.Name("ImportError"))],
        )
    assert isinstance(body, cst.Try)
    return body.with_changes(leading_lines=original.leading_lines)
