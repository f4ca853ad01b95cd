"""NPU504-NPU506: libraries that only run on NVIDIA GPUs (CuPy, numba.cuda, PyCUDA, NVML, bitsandbytes, TensorRT,
Transformer Engine, amp_C) and NVIDIA apex, whose fused Adam and SGD have torch_npu counterparts."""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst

from ascend_port.core import library_support, npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import dotted_ast, resolve_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import build_dotted, dotted, names_in, walk_statements
from ascend_port.python.scopes import Trigger, imported
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.library_packages import TODO_IMPORT_PACKAGES

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

CUDA_LIBRARY = rule(
    "NPU504",
    "cuda-only-library",
    LOW,
    "Imports of CUDA-only libraries (CuPy, numba.cuda, PyCUDA, pynvml, bitsandbytes, TensorRT, Transformer Engine, "
    "amp_C, FlashInfer, SageAttention, Liger-Kernel, xDiT, nvFuser, cuda-python, ...): TODO with the way forward.",
    """
    These libraries have no Ascend build, so the import fails on an NPU host. Each import gets a TODO that says
    what replaces the library: torch tensors on `npu` for CuPy and PyCUDA, `torch.npu.mem_get_info()` /
    `utilization()` or `npu-smi` for NVML, torch_npu optimizers and quantized matmuls for bitsandbytes,
    `torch.compile(backend="npugraph_ex")` or TorchAir for TensorRT, torch_npu fused ops for Transformer Engine,
    `torch._foreach_*` for apex's `amp_C`. A module that imports `numba` gets the TODO at each `numba.cuda` use
    instead (numba's CPU JIT is fine). The libraries of `data/library_support.json` that have a `todo_imports`
    list (FlashInfer, SageAttention, Liger-Kernel, xDiT/yunchang, lmdeploy's TurboMind, nvFuser and Thunder's
    nvFuser executor, Polygraphy, cuda-python's `from cuda import cudart`, NVSHMEM's nvshmem4py) get the way
    forward written there. A run of imports of one library gets one TODO, above the first (one site, one TODO).

    Before:
        import pynvml
    After:
        # TODO(ascend-port): NPU504 [low] NVML (pynvml/nvidia-ml-py) sees no NPU: use torch.npu.mem_get_info(), ...
        import pynvml
    Stays (numba's CPU JIT):
        import numba


        @numba.njit
        def total(xs):
            return xs.sum()
    """,
)
APEX_OPTIMIZER = rule(
    "NPU505",
    "apex-fused-optimizer",
    MEDIUM,
    "`apex.optimizers.FusedAdam`/`FusedSGD` -> `torch.optim.AdamW`/`Adam`/`SGD` (foreach kernels on NPU), where the "
    "module keeps fp32 parameters and loads no optimizer checkpoint.",
    """
    apex's `FusedAdam` is AdamW unless `adam_w_mode=False` (then Adam, with L2 decay), so it becomes
    `torch.optim.AdamW` or `torch.optim.Adam`; `FusedSGD` becomes `torch.optim.SGD`. They compute apex's update
    (bias-corrected moments, `sqrt(v_hat) + eps`, decoupled decay for AdamW; SGD's momentum buffer starts as the
    first gradient) and torch picks their foreach kernels on the NPU (torch_npu registers it as a foreach device on
    Atlas A2 and later). torch_npu's own `NpuFusedAdamW`/`NpuFusedSGD` are not the target: they raise for bf16
    parameters (apex supports them) and for `zero_grad(set_to_none=True)` (accelerate calls it), and they update
    flat buffers that miss a gradient reset to None and re-created by backward (`model.zero_grad()`), a parameter
    re-allocated after construction, or one that gets its first gradient late. torch's `fused=True` is written by
    optimizer-fused-on-npu, on the NPU and where the target torch_npu release has the kernel. apex's default
    `weight_decay` is 0 and AdamW's is 1e-2, so `weight_decay=0.0` is written out when the call does not set it.
    apex-only arguments with their default values (`bias_correction=True`, `capturable=False`, `master_weights=
    False`, `set_grad_none`) are dropped; any other (a third positional argument, `bias_correction=False`,
    `**kwargs`, an `adam_w_mode` that is not a literal) leaves the call with an NPU506 TODO.

    Every apex optimizer call of a module keeps the NPU506 TODO where the port would change the training: where the
    module makes parameters fp16 or bf16 (`.half()`, `.bfloat16()`, `torch.float16`/`bfloat16`/`half` outside
    `autocast(...)`, e.g. `torch_dtype=torch.bfloat16`), since apex keeps the moments of such parameters in fp32 and
    torch in the parameter's dtype (fp16 moments underflow); where it calls `load_state_dict` on an optimizer (a receiver whose
    name contains `opt`), since an apex checkpoint keeps `step` per parameter group and torch.optim wants it per
    parameter (it raises KeyError 'step'); and where the module does not import torch. A dtype chosen at run time
    from a string or a config (`--bf16`) is not visible to a static port: review that. An apex import is removed
    (NPU408) only where every use of its name was a ported call; a use that is no call (`partial(FusedAdam, ...)`,
    a dict of optimizer classes) keeps the apex import with the NPU506 TODO.

    Before:
        import torch
        from apex.optimizers import FusedAdam
        opt = FusedAdam(params)
    After:
        import torch
        opt = torch.optim.AdamW(params, weight_decay=0.0, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    """,
)
APEX = rule(
    "NPU506",
    "apex",
    LOW,
    "Other NVIDIA apex uses (amp, parallel, normalization, other optimizers, multi_tensor_apply): TODO with the "
    "torch or torch_npu replacement.",
    """
    apex is built with CUDA extensions and is not installed on NPU hosts (Ascend ships a separate apex patch).
    Each `from apex... import` (after a plain `import apex`: each apex use) gets a TODO naming the replacement:
    `torch.autocast("npu")` with `torch.npu.amp.GradScaler` for `apex.amp`, `torch.nn.parallel.
    DistributedDataParallel` for `apex.parallel`, `torch.nn.LayerNorm`/`torch.nn.RMSNorm` or
    `torch_npu.npu_rms_norm` for `apex.normalization` (unless another rule already rewrote it; `torch.nn.RMSNorm`
    only where the target torch-npu's torch has it, 2.4 and later), `torch_npu.optim` for the other fused
    optimizers, and `torch._foreach_*` for `multi_tensor_applier`.

    Before:
        from apex import amp
    After:
        # TODO(ascend-port): NPU506 [low] apex.amp: use torch.autocast("npu", dtype=...) with torch.npu.amp.GradScaler...
        from apex import amp
    """,
)

# (module prefix, way forward), for NPU504.
LIBRARIES: tuple[tuple[str, str], ...] = (
    (
        "cupy",
        "CuPy runs only on CUDA: use torch tensors on the npu device (torch covers most of CuPy's NumPy-like "
        "API) or NumPy on the host; RawKernel/ElementwiseKernel code needs a torch, Triton-Ascend or Ascend C "
        "port",
    ),
    ("cupyx", "CuPy runs only on CUDA: use torch tensors on the npu device or NumPy/SciPy on the host"),
    (
        "numba.cuda",
        "numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend "
        "kernel or an Ascend C operator (numba's CPU @jit is fine)",
    ),
    (
        "pycuda",
        "PyCUDA drives the CUDA driver: use torch.npu streams, events and memory with torch tensors; "
        "SourceModule kernels need a Triton-Ascend or Ascend C port",
    ),
    (
        "pynvml",
        "NVML (pynvml/nvidia-ml-py) sees no NPU: use torch.npu.mem_get_info(), torch.npu.memory_stats(), "
        "torch.npu.utilization() or `npu-smi info`",
    ),
    (
        "nvidia_smi",
        "NVML (nvidia-ml-py3) sees no NPU: use torch.npu.mem_get_info(), torch.npu.utilization() or `npu-smi info`",
    ),
    (
        "bitsandbytes",
        "bitsandbytes' quantization and 8-bit optimizers are CUDA kernels: use torch.optim.AdamW("
        "foreach=True) or torch_npu.optim instead of 8-bit optimizers, and torch_npu's quantized "
        "matmuls (npu_weight_quant_batchmatmul, npu_quant_matmul) for low-bit weights",
    ),
    (
        "tensorrt",
        'TensorRT is NVIDIA-only: for inference on Ascend use torch.compile(backend="npugraph_ex") or '
        "TorchAir (torchair.get_npu_backend())",
    ),
    (
        "torch_tensorrt",
        "Torch-TensorRT is NVIDIA-only: for inference on Ascend use torch.compile("
        'backend="npugraph_ex") or TorchAir (torchair.get_npu_backend())',
    ),
    (
        "transformer_engine",
        "Transformer Engine (FP8, fused CUDA layers) has no NPU build: use torch.nn layers "
        'under torch.autocast("npu", dtype=torch.bfloat16) with torch_npu fused ops '
        "(npu_fusion_attention, npu_rms_norm, npu_swiglu); FP8 recipes need a redesign",
    ),
    (
        "amp_C",
        "amp_C is apex's CUDA multi-tensor extension: remove the import and replace multi_tensor_applier("
        "amp_C.<op>, ...) with torch._foreach_* ops (torch._foreach_norm, torch._foreach_mul_), which run on "
        "NPU",
    ),
)

# (apex prefix, way forward), most specific first, for NPU506.
APEX_WAYS: tuple[tuple[str, str], ...] = (
    (
        "apex.amp",
        'apex.amp: use torch.autocast("npu", dtype=...) with torch.npu.amp.GradScaler (amp.initialize '
        "-> drop it, amp.scale_loss(loss, opt) -> scaler.scale(loss)), or Ascend's apex patch",
    ),
    ("apex.parallel.SyncBatchNorm", "apex SyncBatchNorm: use torch.nn.SyncBatchNorm"),
    (
        "apex.parallel.convert_syncbn_model",
        "apex convert_syncbn_model: use torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    ),
    ("apex.parallel", "apex.parallel: use torch.nn.parallel.DistributedDataParallel (backend hccl)"),
    (
        "apex.normalization.FusedRMSNorm",
        "apex FusedRMSNorm: use torch.nn.RMSNorm (same arguments, torch >= 2.4) or torch_npu.npu_rms_norm",
    ),
    ("apex.normalization.MixedFusedRMSNorm", "apex MixedFusedRMSNorm: use torch.nn.RMSNorm or torch_npu.npu_rms_norm"),
    ("apex.normalization", "apex FusedLayerNorm: use torch.nn.LayerNorm (same arguments)"),
    (
        "apex.optimizers.FusedLAMB",
        "apex FusedLAMB: torch_npu.optim.NpuFusedLamb is the closest (it does not clip "
        "the gradient norm: review the arguments)",
    ),
    (
        "apex.optimizers.FusedAdam",
        "apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default "
        "is 0) or torch.optim.Adam",
    ),
    ("apex.optimizers.FusedSGD", "apex FusedSGD: use torch.optim.SGD"),
    (
        "apex.optimizers",
        "apex fused optimizers: use torch_npu.optim.NpuFused* or torch.optim.<Optimizer>(foreach=True)",
    ),
    (
        "apex.multi_tensor_apply",
        "apex multi_tensor_applier: use torch._foreach_* ops (torch._foreach_norm, torch._foreach_mul_)",
    ),
    (
        "apex",
        'apex (NVIDIA) has no NPU build: replace each use (amp -> torch.autocast("npu"), optimizers -> '
        "torch_npu.optim, normalization -> torch.nn) or install Ascend's apex patch",
    ),
)

APEX_OPTIMIZERS = {
    "apex.optimizers.FusedAdam": "adam",
    "apex.optimizers.fused_adam.FusedAdam": "adam",
    "apex.optimizers.FusedSGD": "sgd",
    "apex.optimizers.fused_sgd.FusedSGD": "sgd",
}
# apex-only keyword -> the literal values that can be dropped because they are what torch_npu does anyway.
ADAM_DROPPABLE = {
    "bias_correction": ("True",),
    "capturable": ("False",),
    "master_weights": ("False",),
    "set_grad_none": ("True", "False"),
}
ADAM_KEPT = {"lr", "betas", "eps", "weight_decay", "amsgrad"}
SGD_DROPPABLE = {
    "wd_after_momentum": ("False",),
    "materialize_master_grads": ("True", "False"),
    "set_grad_none": ("True", "False"),
}
SGD_KEPT = {"lr", "momentum", "dampening", "weight_decay", "nesterov"}


def _matches(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def library_way(path: str) -> str | None:
    return next((way for prefix, way in (*LIBRARIES, *library_support.import_ways()) if _matches(path, prefix)), None)


# code of an expression (`w`, `self.linear.weight`) -> (the line it is assigned on, the last line where that holds,
# the class of the CUDA-only library it is assigned an object of)
LibraryObjects = dict[str, list[tuple[int, int, str]]]


def library_class(path: str | None) -> bool:
    """Is ``path`` a class of a CUDA-only library (`bitsandbytes.nn.Params4bit`, `bitsandbytes.nn.Linear4bit`)? (A
    capitalised name: its functions, such as `dequantize_4bit`, return plain torch tensors.)"""
    return path is not None and path.rsplit(".", 1)[-1][:1].isupper() and library_way(path) is not None


def library_objects(facts: ModuleFacts) -> LibraryObjects:
    """What the module assigns an object of a CUDA-only library's class (`self.linear.weight =
    bnb.nn.Params4bit(...)`), where: in a function, from the assignment to the function's end; at the module's top,
    a plain name, to the module's end. Read once per module, by the name the module's imports give the class."""
    tree = facts.tree
    found: LibraryObjects = {}
    if tree is None or not any(map(library_way, facts.imports.aliases.values())):
        return found
    aliases = facts.imports.aliases
    scopes: list[tuple[ast.AST, int]] = [(f, f.end_lineno or f.lineno) for f in facts.statements(ast.FunctionDef)]
    scopes += [(f, f.end_lineno or f.lineno) for f in facts.statements(ast.AsyncFunctionDef)]
    end = max((getattr(n, "end_lineno", 0) or 0 for n in tree.body), default=0)
    for scope, last in [*scopes, (tree, end)]:
        body = ast.walk(scope) if scope is not tree else iter(tree.body)
        for node in body:
            if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                continue
            path = resolve_ast(node.value.func, aliases)
            if not library_class(path):
                continue
            for target in node.targets:
                code = dotted_ast(target)
                if code is not None and (scope is not tree or "." not in code):
                    found.setdefault(code, []).append((node.lineno, last, str(path)))
    return found


RMS_NORM_SINCE = (2, 4)  # the first torch with torch.nn.RMSNorm


def apex_way(path: str, torch: tuple[int, ...] = ()) -> str | None:
    """The way forward for an apex path; for a target whose ``torch`` (its version as numbers) has no
    torch.nn.RMSNorm, the RMSNorm ways name only torch_npu's."""
    way = next((way for prefix, way in APEX_WAYS if _matches(path, prefix)), None)
    if way is not None and torch and torch < RMS_NORM_SINCE and "torch.nn.RMSNorm" in way:
        shown = ".".join(str(n) for n in torch)
        way = (
            f"{way.split(':')[0]}: use torch_npu.npu_rms_norm (torch.nn.RMSNorm needs torch >= 2.4; the target "
            f"torch-npu pairs with torch {shown})"
        )
    return way


def _imported_paths(node: cst.Import | cst.ImportFrom) -> list[str]:
    """The dotted paths an import statement names: ``from a import b, c`` -> ``a.b``, ``a.c``; relative: none."""
    if isinstance(node, cst.Import):
        return [dotted(a.name) or "" for a in node.names]
    if node.relative or node.module is None:
        return []
    module = dotted(node.module) or ""
    if isinstance(node.names, cst.ImportStar):
        return [module]
    return [f"{module}.{a.name.value}" for a in node.names if isinstance(a.name, cst.Name)]


def _ways_said_above(facts: ModuleFacts) -> dict[int, frozenset[str]]:
    """Line of an import statement -> the CUDA-only libraries' ways of the import statement right above it in the
    same block: the one TODO above a run of imports of a library says it for all of them (one TODO per site)."""
    above: dict[int, frozenset[str]] = {}
    previous: dict[int, ast.stmt] = {}  # (statement -> the one before it in its block, by id)
    tree = facts.tree
    if tree is None:
        return above
    for node in walk_statements(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                previous.update((id(b), a) for a, b in zip(block, block[1:]))
    for node in (*facts.statements(ast.Import), *facts.statements(ast.ImportFrom)):
        before = previous.get(id(node))
        if isinstance(before, (ast.Import, ast.ImportFrom)):
            ways = {library_way(path) for path in _ast_imported_paths(before)}
            above[node.lineno] = frozenset(way for way in ways if way is not None)
    return above


def _ast_imported_paths(node: ast.Import | ast.ImportFrom) -> list[str]:
    """``_imported_paths`` of an ``ast`` import statement."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or node.module is None:
        return []
    return [node.module if alias.name == "*" else f"{node.module}.{alias.name}" for alias in node.names]


def _literal(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) and node.value in ("True", "False", "None") else None


# The packages of the `todo_imports`: a module that imports none of them names none of their modules.


class LibraryTransformer(PortTransformer):
    """NPU504-NPU506."""

    TRIGGERS = (
        r"cupy",
        r"numba",
        r"pycuda",
        r"pynvml",
        r"nvidia_smi",
        Trigger(r"bitsandbytes", imports=("bitsandbytes",)),
        r"tensorrt",
        r"transformer_engine",
        r"amp_C",
        # the `todo_imports` of data/library_support.json (cuda-python's `cuda`: in a module that imports a `cuda`,
        # not every `torch.cuda`)
        Trigger("|".join(p for p in TODO_IMPORT_PACKAGES if p != "cuda") + r"|\bcuda\b", imports=TODO_IMPORT_PACKAGES),
        r"apex",
        Trigger(r"Fused[A-Z]\w*", imports=("apex",)),  # apex's fused optimizers
        r"multi_tensor_applier",
        # Megatron's `from apex.optimizers import FusedAdam as Adam`: the calls of the usual aliases.
        Trigger(r"\b(?:Adam|AdamW|SGD)\b", scope=imported("apex.optimizers")),
    )
    RULES = (CUDA_LIBRARY, APEX_OPTIMIZER, APEX)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._import_parts: set[int] = set()  # names inside import statements are not uses
        self._inner: set[int] = set()  # Attributes that are the base of a longer chain, and handled calls' funcs
        # apex TODOs wait for the end of their statement, since another rule may rewrite the construct meanwhile:
        # (statement depth, message, source text that must still be there).
        self._pending: list[tuple[int, str, str]] = []

    # --- pending apex TODOs --------------------------------------------------------------------------------------

    def _leave_statement(self, original_node: Any, updated_node: Any) -> Any:  # (any statement: see below)
        # The composite keeps one TODO list per enclosing statement; its depth says which statement is closing.
        depth = self.ctx.statement_depth()
        mine = [p for p in self._pending if p[0] >= depth]
        if mine:
            self._pending = [p for p in self._pending if p[0] < depth]
            code = cst.Module([]).code_for_node(updated_node)
            for _, message, evidence in mine:
                if evidence in code:
                    self.todo(APEX, original_node, message)
        return updated_node

    leave_SimpleStatementLine = leave_If = leave_For = leave_While = leave_With = leave_Try = _leave_statement
    leave_FunctionDef = leave_ClassDef = _leave_statement

    def _apex_todo(self, message: str, evidence: cst.CSTNode) -> None:
        if self.enabled(APEX):
            self._pending.append((self.ctx.statement_depth(), message, cst.Module([]).code_for_node(evidence)))

    # --- imports -------------------------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        self._import_parts |= names_in(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._import_parts |= names_in(node)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._import_todos(original, updated)
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._import_todos(original, updated)
        return updated

    def _ported_optimizer_names(self, node: cst.Import | cst.ImportFrom) -> set[str]:
        """The apex optimizer paths of ``from apex.optimizers import ...`` whose every use is a ported call."""
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            return set()
        if not any(path in APEX_OPTIMIZERS for path in _imported_paths(node)) or self.ctx.module() is None:
            return set()  # (no apex optimizer: the whole module is not read for it)
        found = set()
        for path, alias in zip(_imported_paths(node), node.names, strict=False):
            local = alias.asname.name if alias.asname is not None else alias.name
            if path in APEX_OPTIMIZERS and isinstance(local, cst.Name):
                kind = APEX_OPTIMIZERS[path]
                if self._blocker() is None and _uses_are_ported_calls(self.ctx.facts(), local.value, kind):
                    found.add(path)
        return found

    def _blocker(self) -> str | None:
        """Why no apex optimizer of this module may be ported (see _module_blocker), computed once."""
        return self.ctx.fact(_blocker)

    def _library_way(self, path: str) -> str | None:
        """library_way, but for a package of the project's own (OwnPackages)."""
        return None if path.split(".")[0] in self.ctx.options.own_packages else library_way(path)

    def _import_todos(self, original: cst.Import | cst.ImportFrom, updated: cst.Import | cst.ImportFrom) -> None:
        plain = (
            {dotted(a.name) for a in original.names if a.asname is None} if isinstance(original, cst.Import) else set()
        )
        ported = self._ported_optimizer_names(original)
        for path in _imported_paths(original):
            if path in ported:
                continue  # every use was rewritten to torch_npu.optim; NPU408 drops the name from the import
            if (way := self._library_way(path)) is not None:
                if way not in self.ctx.fact(_ways_said_above).get(self.ctx.line_of(original), ()):
                    self.todo(CUDA_LIBRARY, original, way)
            elif path in plain and path.split(".")[0] == "apex":
                continue  # `import apex`: each apex use gets its TODO, and NPU408 drops the import once unused
            elif (way := apex_way(path, npu_api.target_torch(self.ctx.options))) is not None:
                self._apex_todo(way, updated)

    # --- uses ------------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.imports.resolve(node.func) in APEX_OPTIMIZERS:
            self._inner.add(id(node.func))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) in self._import_parts or id(original) in self._inner:
            return updated
        qualified = self.ctx.imports.resolve(original)
        if qualified is None:
            return updated
        base: cst.BaseExpression = original
        while isinstance(base, cst.Attribute):
            base = base.value
        # Only where the import said nothing specific (`import numba`, `import apex`): else the import has the TODO.
        bound = self.ctx.imports.aliases.get(base.value, "") if isinstance(base, cst.Name) else ""
        if library_way(bound) is None and (way := self._library_way(qualified)) is not None:
            self.todo(CUDA_LIBRARY, original, way)
        elif (
            apex_way(bound) is not None
            and bound.count(".") == 0
            and (way := apex_way(qualified, npu_api.target_torch(self.ctx.options))) is not None
        ):
            self._apex_todo(way, original)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        kind = APEX_OPTIMIZERS.get(self.ctx.imports.resolve(original.func) or "")
        if kind is None:
            return updated
        port = self._blocker() or (_port_adam(updated) if kind == "adam" else _port_sgd(updated))
        if isinstance(port, str):
            way = apex_way("apex.optimizers.FusedAdam" if kind == "adam" else "apex.optimizers.FusedSGD")
            reason = port if port in BLOCKERS.values() or port.startswith("the module") else f"this call has {port}"
            self._apex_todo(f"{way}, by hand: {reason}", original.func)
            return updated
        target, args = port
        func = build_dotted(f"{self.ctx.torch_name()}.optim.{target}")
        replacement = updated.with_changes(func=func, args=args)
        return (
            self.fix(
                APEX_OPTIMIZER,
                original,
                replacement,
                f"apex {'FusedAdam' if kind == 'adam' else 'FusedSGD'} -> torch.optim.{target}",
            )
            or updated
        )


# Why a module's apex optimizers stay apex's (the NPU506 TODO says which): torch.optim would train differently.
BLOCKERS = {
    "low_precision": "the module makes parameters fp16/bf16, whose moments apex keeps in fp32 and torch.optim in "
    "the parameter's dtype (fp16 moments underflow): keep fp32 master weights or check the moments' dtype",
    "checkpoint": "the module loads an optimizer state_dict: apex checkpoints keep `step` per param group, "
    "torch.optim per parameter (KeyError 'step'): convert the checkpoint or start the optimizer afresh",
}
_LOW_PRECISION = {"half", "float16", "bfloat16"}


def _under_autocast(module: ast.Module) -> set[int]:
    """The nodes inside the arguments of `autocast(...)` calls (a dtype there casts ops, not parameters)."""
    inside: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and (_dotted_ast(node.func) or "").rsplit(".", 1)[-1] == "autocast":
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                inside |= {id(n) for n in ast.walk(arg)}
    return inside


def _dotted_ast(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted_ast(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _blocker(facts: ModuleFacts) -> str | None:
    if facts.tree is None:
        return "the module could not be read"
    if facts.imports.local_name_for("torch") is None:
        return "the module does not import torch"
    return _module_blocker(facts.tree)


def _module_blocker(module: ast.Module) -> str | None:
    """Why the module's apex optimizers must stay (a BLOCKERS message), or None: the module makes no parameter
    fp16/bf16 (`.half()`, `.bfloat16()`, `torch.float16`/`bfloat16`/`half` outside autocast's arguments, a
    `"bfloat16"` dtype string) and loads no optimizer state (`<...opt...>.load_state_dict(...)`)."""
    autocast = _under_autocast(module)
    for node in ast.walk(module):
        if id(node) in autocast:
            continue
        if isinstance(node, ast.Attribute) and node.attr in _LOW_PRECISION:
            return BLOCKERS["low_precision"]
        if isinstance(node, ast.Constant) and node.value in ("float16", "bfloat16"):
            return BLOCKERS["low_precision"]  # torch_dtype="bfloat16"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "load_state_dict"
            and "opt" in ast.unparse(node.func.value).lower()
        ):
            return BLOCKERS["checkpoint"]
    return None


def _uses_are_ported_calls(facts: ModuleFacts, name: str, kind: str) -> bool:
    """Does ``name`` occur (at least once) and only as the function of calls whose arguments torch.optim's optimizer
    takes (what _port_adam/_port_sgd accept), in the module as written?"""
    uses = [node for node in facts.nodes(ast.Name) if node.id == name]
    return bool(uses) and all(
        isinstance(call := facts.parent(use), ast.Call) and call.func is use and _ast_call_ports(call, kind)
        for use in uses
    )


def _ast_call_ports(call: ast.Call, kind: str) -> bool:
    max_positional, kept, droppable = (2, ADAM_KEPT, ADAM_DROPPABLE) if kind == "adam" else (6, SGD_KEPT, SGD_DROPPABLE)
    if len(call.args) > max_positional or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    for keyword in call.keywords:
        value = repr(keyword.value.value) if isinstance(keyword.value, ast.Constant) else None
        if keyword.arg is None:
            return False
        if kind == "adam" and keyword.arg == "adam_w_mode":
            if value not in ("True", "False"):
                return False
        elif keyword.arg in droppable:
            if value not in droppable[keyword.arg]:
                return False
        elif keyword.arg not in kept:
            return False
    return True


def _port_args(
    call: cst.Call, max_positional: int, kept: set[str], droppable: dict[str, tuple[str, ...]], consumed: set[str]
) -> list[cst.Arg] | str:
    """The arguments for the torch_npu optimizer, or the reason the call cannot be ported."""
    args: list[cst.Arg] = []
    positional = 0
    for arg in call.args:
        if arg.star:
            return f"{arg.star}-arguments"
        if arg.keyword is None:
            positional += 1
            if positional > max_positional:
                return f"{positional} positional arguments"
            args.append(arg)
            continue
        name = arg.keyword.value
        if name in consumed:
            continue
        if name in droppable:
            if _literal(arg.value) not in droppable[name]:
                return f"{name}={cst.Module([]).code_for_node(arg.value)}"
            continue
        if name not in kept:
            return f"argument {name}"
        args.append(arg)
    return args


def _tidy(call: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
    """Let LibCST place the commas again after arguments were dropped, keeping a trailing comma if there was one."""
    trailing = bool(call.args) and isinstance(call.args[-1].comma, cst.Comma)
    if not args or trailing:
        return args
    return [*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


def _append(call: cst.Call, args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    args = _tidy(call, args)
    if args and isinstance(args[-1].comma, cst.Comma):
        # Trailing-comma style, one argument per line: the new argument takes the last comma (the one before the
        # closing parenthesis) and the old last argument takes the separator its predecessor has.
        separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else args[-1].comma
        return [*args[:-1], args[-1].with_changes(comma=separator), new.with_changes(comma=args[-1].comma)]
    return [*args, new]


def _port_adam(call: cst.Call) -> tuple[str, list[cst.Arg]] | str:
    mode = next((a for a in call.args if a.keyword is not None and a.keyword.value == "adam_w_mode"), None)
    adam_w = True if mode is None else {"True": True, "False": False}.get(_literal(mode.value) or "")
    if adam_w is None:
        return "adam_w_mode is not a literal"
    args = _port_args(call, 2, ADAM_KEPT, ADAM_DROPPABLE, {"adam_w_mode"})
    if isinstance(args, str):
        return args
    has_decay = any(a.keyword is not None and a.keyword.value == "weight_decay" for a in args)
    if adam_w and not has_decay:
        # apex's default weight decay is 0; torch.optim.AdamW's is 0.01.
        decay = cst.Arg(
            keyword=cst.Name("weight_decay"),
            value=cst.Float("0.0"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        return "AdamW", _append(call, args, decay)
    return ("AdamW" if adam_w else "Adam"), _tidy(call, args)


def _port_sgd(call: cst.Call) -> tuple[str, list[cst.Arg]] | str:
    args = _port_args(call, 6, SGD_KEPT, SGD_DROPPABLE, set())
    if isinstance(args, str):
        return args
    return "SGD", _tidy(call, args)
