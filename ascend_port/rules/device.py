"""NPU1xx: the device layer. ``.cuda()``, device strings, ``torch.cuda.*``, TF32 flags, CUDA environment variables."""

from __future__ import annotations

import re

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import build_dotted, dotted
from ascend_port.python.transformer import PortTransformer

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

CUDA_METHOD = rule(
    "NPU101",
    "cuda-method",
    HIGH,
    "`.cuda(...)` -> `.npu(...)` on tensors and modules, with the same arguments.",
    """
    `Tensor.npu` and `Module.npu` take the same arguments as `.cuda` (`device`, `non_blocking`, `memory_format`).
    Only calls are rewritten: an attribute that merely reads `.cuda` (`cfg.cuda`) is user data and stays.

    Before:
        model.cuda(local_rank)
        batch = batch.cuda(non_blocking=True)
    After:
        model.npu(local_rank)
        batch = batch.npu(non_blocking=True)
    """,
)
IS_CUDA = rule(
    "NPU102",
    "is-cuda",
    HIGH,
    "`tensor.is_cuda` -> `tensor.is_npu`.",
    """
    Reads of `.is_cuda` become `.is_npu`. Assignments to an attribute called `is_cuda` are user code and stay.

    Before:
        assert x.is_cuda
    After:
        assert x.is_npu
    """,
)
DEVICE_ARGUMENT = rule(
    "NPU103",
    "device-string-argument",
    HIGH,
    "Device strings passed as devices (`torch.device`, `device=`, `map_location=`, `.to()`) -> `npu`.",
    """
    `"cuda"`, `"cuda:N"`, `f"cuda:{i}"`, `"cuda:" + str(i)` and `"cuda:{}".format(i)` become their `npu` forms
    where they are passed as a device: the first argument of `torch.device`, `torch.cuda.set_device`,
    `torch.set_default_device`, `.to()`, the second of `torch.load`, and the keyword arguments `device=`,
    `device_type=`, `device_map=` and `map_location=` of any call. Conditional expressions and dicts
    (`map_location={"cuda:0": "cuda:1"}`) are followed. Other strings are never touched.

    Before:
        import torch
        device = torch.device("cuda", local_rank)
        state = torch.load(path, map_location=f"cuda:{rank}")
    After:
        import torch
        device = torch.device("npu", local_rank)
        state = torch.load(path, map_location=f"npu:{rank}")
    """,
)
DEVICE_SETTING = rule(
    "NPU104",
    "device-string-setting",
    MEDIUM,
    "Device strings stored in device settings (variables, defaults, argparse, dict keys) -> `npu`.",
    """
    A device string assigned to a name that says it holds a device (`device`, `self.device`, `DEVICE_TYPE`,
    `accelerator`), a parameter default of such a parameter, an argparse `default=`/`choices=`, or a dict entry
    whose key names a device. The name is the evidence, hence medium confidence: review the diff.

    Before:
        parser.add_argument("--device", default="cuda")
        def run(device: str = "cuda:0"): ...
    After:
        parser.add_argument("--device", default="npu")
        def run(device: str = "npu:0"): ...
    """,
)
DEVICE_COMPARISON = rule(
    "NPU105",
    "device-string-comparison",
    HIGH,
    "Comparisons and membership tests against device strings -> `npu`.",
    """
    `x.device.type == "cuda"`, `"cuda" in str(device)`, `device in ("cuda", "cpu")` and
    `device.startswith("cuda")` compare a device type; on an NPU host the type is `npu`.

    Before:
        import torch
        if x.device.type == "cuda":
            x = x.half()
    After:
        import torch
        if x.device.type == "npu":
            x = x.half()
    """,
)
TORCH_CUDA_API = rule(
    "NPU106",
    "torch-cuda-api",
    HIGH,
    "`torch.cuda.X` -> `torch.npu.X` for every X in torch_npu's public `torch.npu` API (all import styles).",
    """
    The list of names is torch_npu 2.14.0's `torch.npu.__all__` and its public submodules, shipped as package data.
    `import torch.cuda as tc`, `from torch import cuda` and `from torch.cuda import synchronize` are rewritten
    with their uses.

    Before:
        import torch
        torch.cuda.synchronize()
        from torch.cuda import amp
    After:
        import torch
        torch.npu.synchronize()
        from torch.npu import amp
    """,
)
TORCH_CUDA_UNSUPPORTED = rule(
    "NPU107",
    "torch-cuda-unsupported",
    LOW,
    "`torch.cuda.X` with no `torch.npu` counterpart: left unchanged, with a TODO naming the gap.",
    """
    Names such as `torch.cuda.memory_usage`, `torch.cuda.comm` or `torch.cuda.jiterator` do not exist in
    torch_npu. The code is not changed; a TODO comment marks it for a manual port.

    Before:
        import torch
        used = torch.cuda.memory_usage()
    After:
        import torch
        # TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart (torch_npu 2.14.0): port by hand
        used = torch.cuda.memory_usage()
    """,
)
DEVICE_CAPABILITY = rule(
    "NPU108",
    "device-capability",
    LOW,
    "`get_device_capability()` returns None on NPU, and device properties lack major/minor: TODO.",
    """
    `torch.npu.get_device_capability()` returns None unless `TORCH_NPU_DEVICE_CAPABILITY` is set, so
    `cap[0] >= 8` raises TypeError; `get_device_properties(d).major/.minor/.multi_processor_count` do not exist.
    The call is renamed by NPU106 and this rule leaves a TODO: test the feature you need instead
    (`torch.npu.is_bf16_supported()`). An Ampere test that chooses bf16 is rewritten to that by NPU304 instead.

    Before:
        import torch
        use_fp8 = torch.cuda.get_device_capability() >= (8, 9)
    After:
        import torch
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()
        use_fp8 = torch.npu.get_device_capability() >= (8, 9)
    """,
)
MATMUL_TF32 = rule(
    "NPU109",
    "matmul-allow-tf32",
    HIGH,
    "`torch.backends.cuda.matmul.allow_tf32` -> `torch.npu.matmul.allow_hf32`.",
    """
    HF32 is Ascend's analogue of TF32 for matrix multiplication (default False on NPU, as TF32 on recent torch).

    Before:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
    After:
        import torch
        torch.npu.matmul.allow_hf32 = True
    """,
)
CONV_TF32 = rule(
    "NPU110",
    "cudnn-allow-tf32",
    HIGH,
    "`torch.backends.cudnn.allow_tf32` -> `torch.npu.conv.allow_hf32`.",
    """
    HF32 for convolutions (default True on NPU, as cuDNN's TF32 default).

    Before:
        import torch
        torch.backends.cudnn.allow_tf32 = True
    After:
        import torch
        torch.npu.conv.allow_hf32 = True
    """,
)
CUDA_ENV_VAR = rule(
    "NPU111",
    "cuda-env-var",
    HIGH,
    "CUDA environment variable names in Python strings -> their Ascend names.",
    """
    A string that is exactly the name of a CUDA runtime variable, read or set from Python (`os.environ[...]`,
    `os.getenv(...)`, an `env={...}` dict), becomes the Ascend name: `CUDA_VISIBLE_DEVICES` ->
    `ASCEND_RT_VISIBLE_DEVICES`, `CUDA_LAUNCH_BLOCKING` -> `ASCEND_LAUNCH_BLOCKING`, `PYTORCH_CUDA_ALLOC_CONF` ->
    `PYTORCH_NPU_ALLOC_CONF`, `PYTORCH_NO_CUDA_MEMORY_CACHING` -> `PYTORCH_NO_NPU_MEMORY_CACHING`. Docstrings stay.

    Before:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
    After:
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
    """,
)

CUDA_ENV_VARS = {
    "CUDA_VISIBLE_DEVICES": "ASCEND_RT_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING": "ASCEND_LAUNCH_BLOCKING",
    "PYTORCH_CUDA_ALLOC_CONF": "PYTORCH_NPU_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "PYTORCH_NO_NPU_MEMORY_CACHING",
}

# Functions whose first positional argument is a device.
DEVICE_FIRST_ARG = {
    "torch.device",
    "torch.set_default_device",
    "torch.get_device_module",
    "torch.Generator",
    "torch.cuda.set_device",
    "torch.cuda.device",
    "torch.npu.set_device",
    "torch.npu.device",
}
DEVICE_KEYWORDS = {"device", "device_type", "device_map", "map_location"}
DEVICE_NAME = re.compile(r"(?i)device|^dev$|accelerator")
DEVICE_STRING = re.compile(r"^cuda(:\d+)?$")
# Format templates that build a device string: "cuda:%d" % i, "cuda:{}".format(i), "cuda:" + str(i).
DEVICE_TEMPLATE = re.compile(r"^cuda:(%[ds]|\{\w*\}|)$")
TORCH_CUDA_METHODS = {"torch.Tensor.cuda", "torch.nn.Module.cuda"}
# `torch.cuda.X` names whose port belongs to other rules (NPU700 NVTX -> mstx, NPU701 CUDA graphs, in compile.py):
# this module neither renames nor flags them.
OWNED_ELSEWHERE = {
    "nvtx",
    "CUDAGraph",
    "graph",
    "make_graphed_callables",
    "graph_pool_handle",
    "is_current_stream_capturing",
}
PROPERTY_GAPS = {"major", "minor", "multi_processor_count"}


CUDA_METHOD_KEYWORDS = {"device", "non_blocking", "memory_format"}


def _has_cuda_signature(call: cst.Call) -> bool:
    """Could this be `Tensor.cuda`/`Module.cuda`? A user's own `.cuda(x, meta=...)` method is not ours to rename."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return len(positional) <= 1 and keywords <= CUDA_METHOD_KEYWORDS


def _replace_cuda_in_token(node: cst.SimpleString) -> cst.SimpleString:
    return node.with_changes(value=node.value.replace("cuda", "npu", 1))


def rewrite_device_expr(expr: cst.BaseExpression, containers: bool = True) -> cst.BaseExpression | None:
    """The expression with every device string in it turned to npu, or None when there is none.

    Follows the shapes device expressions take in real code; anything else (calls, names) is left alone.
    ``containers`` allows tuples, lists, sets and dicts (`choices=[...]`, `map_location={...}`): right for
    arguments, wrong for settings, where a dict of devices is usually a dispatch table keyed by device type.
    """
    if isinstance(expr, cst.SimpleString):
        return _rewrite_device_string(expr)
    if isinstance(expr, cst.FormattedString):
        return _rewrite_device_fstring(expr)
    if isinstance(expr, cst.BinaryOperation):
        return _rewrite_device_template_operation(expr)
    if isinstance(expr, cst.Call):
        return _rewrite_device_format_call(expr)
    if isinstance(expr, cst.IfExp):
        return _rewrite_device_if_exp(expr, containers)
    if isinstance(expr, cst.BooleanOperation):
        return _rewrite_device_boolean(expr, containers)
    if not containers:
        return None
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return _rewrite_device_elements(expr)
    if isinstance(expr, cst.Dict):
        return _rewrite_device_dict(expr)
    return None


def _rewrite_device_string(expr: cst.SimpleString) -> cst.SimpleString | None:
    """`"cuda"`, `"cuda:0"`."""
    value = expr.evaluated_value
    if isinstance(value, str) and DEVICE_STRING.match(value):
        return _replace_cuda_in_token(expr)
    return None


def _rewrite_device_fstring(expr: cst.FormattedString) -> cst.FormattedString | None:
    """`f"cuda:{rank}"`: only the literal text before the first placeholder names the device type."""
    parts = expr.parts
    if parts and isinstance(parts[0], cst.FormattedStringText) and parts[0].value in ("cuda", "cuda:"):
        first = parts[0].with_changes(value=parts[0].value.replace("cuda", "npu", 1))
        return expr.with_changes(parts=[first, *parts[1:]])
    return None


def _rewrite_device_template_operation(expr: cst.BinaryOperation) -> cst.BinaryOperation | None:
    """`"cuda:" + str(i)`, `"cuda:%d" % i`."""
    if not isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return None
    left = expr.left
    if isinstance(left, cst.SimpleString) and DEVICE_TEMPLATE.match(str(left.evaluated_value)):
        return expr.with_changes(left=_replace_cuda_in_token(left))
    return None


def _rewrite_device_format_call(expr: cst.Call) -> cst.Call | None:
    """`"cuda:{}".format(i)`; any other call is left alone."""
    if not (isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format"):
        return None
    template = expr.func.value
    if isinstance(template, cst.SimpleString) and DEVICE_TEMPLATE.match(str(template.evaluated_value)):
        return expr.with_changes(func=expr.func.with_changes(value=_replace_cuda_in_token(template)))
    return None


def _rewrite_device_if_exp(expr: cst.IfExp, containers: bool) -> cst.IfExp | None:
    """`"cuda" if gpu else "cpu"`: either branch (the condition is not a device)."""
    body, orelse = rewrite_device_expr(expr.body, containers), rewrite_device_expr(expr.orelse, containers)
    if body is None and orelse is None:
        return None
    return expr.with_changes(body=body or expr.body, orelse=orelse or expr.orelse)


def _rewrite_device_boolean(expr: cst.BooleanOperation, containers: bool) -> cst.BooleanOperation | None:
    """`args.device or "cuda"`: either operand."""
    left, right = rewrite_device_expr(expr.left, containers), rewrite_device_expr(expr.right, containers)
    if left is None and right is None:
        return None
    return expr.with_changes(left=left or expr.left, right=right or expr.right)


def _rewrite_device_elements(expr: cst.Tuple | cst.List | cst.Set) -> cst.Tuple | cst.List | cst.Set | None:
    """`choices=["cuda", "cpu"]`: each element (not `*rest`); nested containers are followed."""
    changed = False
    elements = []
    for element in expr.elements:
        new = rewrite_device_expr(element.value) if isinstance(element, cst.Element) else None
        changed |= new is not None
        elements.append(element.with_changes(value=new) if new is not None else element)
    return expr.with_changes(elements=elements) if changed else None


def _rewrite_device_dict(expr: cst.Dict) -> cst.Dict | None:
    """`map_location={"cuda:0": "cuda:1"}`: keys and values (not `**rest`)."""
    changed = False
    elements = []
    for element in expr.elements:
        if isinstance(element, cst.DictElement):
            key, value = rewrite_device_expr(element.key), rewrite_device_expr(element.value)
            if key is not None or value is not None:
                changed = True
                element = element.with_changes(key=key or element.key, value=value or element.value)
        elements.append(element)
    return expr.with_changes(elements=elements) if changed else None


class DeviceTransformer(PortTransformer):
    """NPU101-NPU111. One class because these rules meet on the same nodes (calls, attributes, strings)."""

    # Every name these rules rewrite is lower-case `cuda` (`.cuda()`, `torch.cuda`, "cuda:0", `is_cuda`) or one of
    # the upper-case environment variables; "CUDA" in prose and constants is not theirs.
    TRIGGERS = (r"cuda", r"cudnn", r"CUDA_(?:VISIBLE_DEVICES|LAUNCH_BLOCKING|ALLOC_CONF|MEMORY_CACHING)")
    RULES = (
        CUDA_METHOD,
        IS_CUDA,
        DEVICE_ARGUMENT,
        DEVICE_SETTING,
        DEVICE_COMPARISON,
        TORCH_CUDA_API,
        TORCH_CUDA_UNSUPPORTED,
        DEVICE_CAPABILITY,
        MATMUL_TF32,
        CONV_TF32,
        CUDA_ENV_VAR,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.load()
        # Nodes that are not expressions of their own: `.attr` names, keyword names, store targets, docstrings.
        self._attribute_bases: set[int] = set()
        self._store_targets: set[int] = set()
        self._docstrings: set[int] = set()
        self._in_import = False  # import statements are rewritten whole, by leave_Import/leave_ImportFrom
        # `from torch import cuda` binds the name `cuda`; it becomes `from torch import npu`, so its uses follow.
        self._rename_cuda_name = ctx.imports.aliases.get("cuda") == "torch.cuda"

    # --- bookkeeping -------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attribute_bases.add(id(node.value))

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store_targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store_targets.add(id(node.target))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._docstrings.add(id(node.value))

    # --- torch.cuda.* and attributes ---------------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._in_import or id(original) in self.ctx.claimed:
            return updated  # claimed: a later rule rewrites the whole construct (NPU304's bf16 checks)
        qualified = self.ctx.imports.resolve(original)
        torch = self.ctx.torch_name()
        if qualified == "torch.backends.cuda.matmul.allow_tf32":
            return (
                self.fix(
                    MATMUL_TF32,
                    original,
                    build_dotted(f"{torch}.npu.matmul.allow_hf32"),
                    "torch.backends.cuda.matmul.allow_tf32 -> torch.npu.matmul.allow_hf32",
                )
                or updated
            )
        if qualified == "torch.backends.cudnn.allow_tf32":
            return (
                self.fix(
                    CONV_TF32,
                    original,
                    build_dotted(f"{torch}.npu.conv.allow_hf32"),
                    "torch.backends.cudnn.allow_tf32 -> torch.npu.conv.allow_hf32",
                )
                or updated
            )
        if qualified in TORCH_CUDA_METHODS:
            return (
                self.fix(
                    CUDA_METHOD,
                    original,
                    updated.with_changes(attr=cst.Name("npu")),
                    f"{qualified} -> {qualified[:-4]}npu",
                )
                or updated
            )
        if original.attr.value == "is_cuda" and id(original) not in self._store_targets:
            return (
                self.fix(IS_CUDA, original, updated.with_changes(attr=cst.Name("is_npu")), ".is_cuda -> .is_npu")
                or updated
            )
        if original.attr.value in PROPERTY_GAPS and isinstance(original.value, cst.Call):
            if self.ctx.imports.resolve(original.value.func) in (
                "torch.cuda.get_device_properties",
                "torch.npu.get_device_properties",
            ):
                self.todo(
                    DEVICE_CAPABILITY,
                    original,
                    f"NPU device properties have no .{original.attr.value} (only name, total_memory, "
                    "L2_cache_size, cube_core_num, vector_core_num): test the feature instead",
                )
        if qualified and qualified.startswith("torch.cuda"):
            return self._torch_cuda_attribute(original, updated, qualified)
        return updated

    def _torch_cuda_attribute(self, original: cst.Attribute, updated: cst.Attribute, qualified: str):
        parts = qualified.split(".")
        if len(parts) == 2:
            if id(original) in self._attribute_bases:
                return updated  # the enclosing `torch.cuda.X` decides
            return (
                self.fix(
                    TORCH_CUDA_API, original, updated.with_changes(attr=cst.Name("npu")), "torch.cuda -> torch.npu"
                )
                or updated
            )
        if len(parts) != 3:
            return updated
        name = parts[2]
        if name in OWNED_ELSEWHERE:
            return updated
        if not self.api.has(name):
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{name} has no torch.npu counterpart (torch_npu {self.api.version}): port by hand",
            )
            return updated
        if name == "get_device_capability":
            self.todo(
                DEVICE_CAPABILITY,
                original,
                "get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()",
            )
        base = original.value
        if isinstance(base, cst.Attribute) and base.attr.value == "cuda":
            # Spelled through the torch module (`torch.cuda.X`, `th.cuda.X`): rename the `cuda` link.
            new_base = updated.value.with_changes(attr=cst.Name("npu"))
            return (
                self.fix(
                    TORCH_CUDA_API,
                    original,
                    updated.with_changes(value=new_base),
                    f"torch.cuda.{name} -> torch.npu.{name}",
                )
                or updated
            )
        return updated  # through an alias (`tc.X`, `cuda.X`): the import and the name are rewritten instead

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self._rename_cuda_name and original.value == "cuda" and id(original) in self._attribute_bases:
            return self.fix(TORCH_CUDA_API, original, updated.with_changes(value="npu"), "cuda -> npu") or updated
        return updated

    # --- imports ------------------------------------------------------------------------------------------------

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._in_import = False
        names = []
        changed = False
        for alias in updated.names:
            module = dotted(alias.name)
            if module and (module == "torch.cuda" or module.startswith("torch.cuda.")):
                rest = module[len("torch.cuda.") :]
                if not rest or self.api.has_path(rest):
                    new_alias = alias.with_changes(name=build_dotted("torch.npu" + module[len("torch.cuda") :]))
                    if alias.asname and isinstance(alias.asname.name, cst.Name) and alias.asname.name.value == "cuda":
                        new_alias = new_alias.with_changes(asname=alias.asname.with_changes(name=cst.Name("npu")))
                    alias, changed = new_alias, True
            names.append(alias)
        if not changed:
            return updated
        return (
            self.fix(TORCH_CUDA_API, original, updated.with_changes(names=names), "import torch.cuda -> torch.npu")
            or updated
        )

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._in_import = False
        module = dotted(updated.module) if updated.module and not updated.relative else None
        if module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        imported = [alias.name.value for alias in updated.names if isinstance(alias.name, cst.Name)]
        if module == "torch" and "cuda" in imported:
            names = [
                alias.with_changes(name=cst.Name("npu")) if alias.name.value == "cuda" else alias
                for alias in updated.names
            ]
            return (
                self.fix(TORCH_CUDA_API, original, updated.with_changes(names=names), "from torch import cuda -> npu")
                or updated
            )
        if module != "torch.cuda" and not module.startswith("torch.cuda."):
            return updated
        return self._from_torch_cuda_import(original, updated, module, imported)

    def _from_torch_cuda_import(
        self, original: cst.ImportFrom, updated: cst.ImportFrom, module: str, imported: list[str]
    ) -> cst.ImportFrom:
        """`from torch.cuda[.sub] import names` -> `from torch.npu[.sub] import names`, when torch.npu has them all;
        otherwise the import stays with a TODO naming what is missing (a partial rename would break the rest).
        Imports of what other rules own (NVTX, CUDA graphs) are theirs: left alone."""
        sub = module[len("torch.cuda.") :]
        if sub.split(".")[0] in OWNED_ELSEWHERE or (not sub and OWNED_ELSEWHERE.intersection(imported)):
            return updated
        missing = [n for n in imported if not self.api.has_path(f"{sub}.{n}" if sub else n)]
        if missing:
            names = missing[0] if len(missing) == 1 else "{" + ", ".join(missing) + "}"
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"{module}.{names} has no torch.npu counterpart (torch_npu {self.api.version}): port by hand",
            )
            return updated
        new_module = build_dotted("torch.npu" + module[len("torch.cuda") :])
        return (
            self.fix(
                TORCH_CUDA_API,
                original,
                updated.with_changes(module=new_module),
                f"from {module} import ... -> from torch.npu{module[len('torch.cuda') :]}",
            )
            or updated
        )

    # --- calls: .cuda(), device arguments ----------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        qualified = self.ctx.imports.resolve(func)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "cuda" and qualified is None and _has_cuda_signature(original):
                new_func = updated.func.with_changes(attr=cst.Name("npu"))
                updated = (
                    self.fix(CUDA_METHOD, original, updated.with_changes(func=new_func), ".cuda() -> .npu()") or updated
                )
            elif method == "to" and qualified is None:
                updated = self._device_positional(original, updated, 0)
            elif method == "startswith" and self._looks_like_device(func.value):
                updated = self._rewrite_args(original, updated, DEVICE_COMPARISON, positions={0})
            elif method == "add_argument":
                updated = self._rewrite_args(original, updated, DEVICE_SETTING, keywords={"default", "choices"})
        if qualified in DEVICE_FIRST_ARG or (qualified or "").replace(".npu.", ".cuda.") in DEVICE_FIRST_ARG:
            updated = self._device_positional(original, updated, 0)
            if qualified == "torch.device":
                updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords={"type"})
        elif qualified == "torch.load":
            updated = self._device_positional(original, updated, 1)
        updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords=DEVICE_KEYWORDS)
        return self._rewrite_args(original, updated, DEVICE_SETTING, keyword_filter=DEVICE_NAME)

    def _device_positional(self, original: cst.Call, updated: cst.Call, index: int) -> cst.Call:
        return self._rewrite_args(original, updated, DEVICE_ARGUMENT, positions={index})

    def _rewrite_args(
        self,
        original: cst.Call,
        updated: cst.Call,
        rule,
        *,
        positions=frozenset(),
        keywords=frozenset(),
        keyword_filter: re.Pattern | None = None,
    ) -> cst.Call:
        args = list(updated.args)
        changed = False
        positional = 0
        for i, arg in enumerate(args):
            if arg.star:
                continue
            if arg.keyword is None:
                selected = positional in positions
                positional += 1
            else:
                name = arg.keyword.value
                selected = name in keywords or (
                    keyword_filter is not None and name not in DEVICE_KEYWORDS and bool(keyword_filter.search(name))
                )
            if selected and (new := rewrite_device_expr(arg.value)) is not None:
                args[i] = arg.with_changes(value=new)
                changed = True
        if not changed:
            return updated
        return self.fix(rule, original, updated.with_changes(args=args), "device string cuda -> npu") or updated

    @staticmethod
    def _looks_like_device(receiver: cst.BaseExpression) -> bool:
        return bool(DEVICE_NAME.search(cst.Module([]).code_for_node(receiver)))

    # --- comparisons, settings, environment variables -----------------------------------------------------------

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.Comparison:
        left = (
            rewrite_device_expr(updated.left)
            if isinstance(updated.left, (cst.SimpleString, cst.FormattedString))
            else None
        )
        targets = []
        changed = left is not None
        for target in updated.comparisons:
            operand = target.comparator
            new = None
            if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
                if isinstance(operand, (cst.SimpleString, cst.FormattedString, cst.Tuple, cst.List, cst.Set)):
                    new = rewrite_device_expr(operand)
            changed |= new is not None
            targets.append(target.with_changes(comparator=new) if new is not None else target)
        if not changed:
            return updated
        replacement = updated.with_changes(left=left or updated.left, comparisons=targets)
        return self.fix(DEVICE_COMPARISON, original, replacement, "device comparison cuda -> npu") or updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if any(self._names_device(t.target) for t in original.targets):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        if updated.value is not None and self._names_device(original.target):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if updated.default is not None and DEVICE_NAME.search(original.name.value):
            if (new := rewrite_device_expr(updated.default, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(default=new), "device default cuda -> npu")
                    or updated
                )
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        key = original.key
        if isinstance(key, cst.SimpleString) and DEVICE_NAME.search(str(key.evaluated_value)):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if id(original) in self._docstrings:
            return updated
        value = original.evaluated_value
        if isinstance(value, str) and value in CUDA_ENV_VARS:
            new = updated.with_changes(value=updated.value.replace(value, CUDA_ENV_VARS[value]))
            return self.fix(CUDA_ENV_VAR, original, new, f"{value} -> {CUDA_ENV_VARS[value]}") or updated
        return updated

    @staticmethod
    def _names_device(target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return bool(DEVICE_NAME.search(target.value))
        if isinstance(target, cst.Attribute):
            return bool(DEVICE_NAME.search(target.attr.value))
        return False
