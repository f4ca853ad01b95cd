"""NPU1xx: the device layer. ``.cuda()``, device strings, ``torch.cuda.*``, TF32 flags, CUDA environment variables."""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Callable, Iterator
from typing import TypeGuard

import libcst as cst

from ascend_port.core import library_support, npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.sources import python_lines
from ascend_port.python.comparisons import compared
from ascend_port.python.device_facts import (
    AVAILABILITY,
    BF16_WORD,
    CAPABILITY_CALLS,
    CUDA_FEATURE,
    DEVICE_OPERAND,
    PROBE_NAMES,
    PROBES,
    PROPERTIES_CALLS,
    PROPERTY_GAPS,
    Definitions,
    DeviceFacts,
)
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import build_dotted, dotted
from ascend_port.python.scopes import FUNCTIONS, Trigger, outermost
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.triton_kernels import CORE_COUNT

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
    Stays (another device's string, and a message that names CUDA):
        import torch
        x = torch.zeros(3, device="xpu")
        message = "moved to cuda:0"
    """,
)
DEVICE_SETTING = rule(
    "NPU104",
    "device-string-setting",
    MEDIUM,
    "Device strings stored in device settings (variables, defaults, argparse, dict keys) -> `npu`.",
    """
    A device string assigned to a name that says it holds a device (`device`, `self.device`, `DEVICE_TYPE`,
    `accelerator`), a parameter default of such a parameter, the `default=`/`choices=` of an argparse option that
    names a device (`--device`, `--accelerator`; not `--backend` or `--impl`), or a dict entry whose key names a
    device. A value computed from Triton's target name (`get_current_target().backend`) stays. The name is the
    evidence, hence medium confidence: review the diff.

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
    `device.startswith("cuda")` compare a device type; on an NPU host the type is `npu`. The other side must hold
    a device: its code says device, dev or accelerator, or reads `.type`. Any other "cuda" is not a device and
    stays: a library's backend or implementation name (`backend == "cuda"`, `impl == "cuda"`, ONNX Runtime's
    provider), and Triton's target name (`get_current_target().backend == "cuda"`, and the variables and functions
    of the module that hold it, even one called `device_platform`). In an `and`/`or` chain, or an early exit
    (`assert`, `if ...: return/raise`), that guards a CUDA capability check left as it is (NPU108), the device
    test stays "cuda" too.

    Before:
        import torch
        if x.device.type == "cuda":
            x = x.half()
    After:
        import torch
        if x.device.type == "npu":
            x = x.half()
    Stays (another device's branch):
        import torch
        def sync(device):
            if device.type == "xpu":
                torch.xpu.synchronize()
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
    with their uses; `import torch.cuda.amp as amp` becomes `from torch.npu import amp` (torch_npu registers the
    module `torch.npu`, not its submodules). A function whose name asks about CUDA (`is_cuda_available`, `has_cuda`,
    `get_cuda_capability`) keeps answering for CUDA: nothing in it is ported; an op builder's `is_compatible` keeps
    its `torch.cuda.is_available()`; and capability probes used as guards are NPU108's.

    Before:
        import torch
        torch.cuda.synchronize()
        from torch.cuda import amp
    After:
        import torch
        torch.npu.synchronize()
        from torch.npu import amp
    Stays (another accelerator's module):
        import torch
        if torch.xpu.is_available():
            torch.xpu.synchronize()
    """,
)
USER_CUDA_METHOD = rule(
    "NPU113",
    "user-cuda-method",
    MEDIUM,
    "A class's own `cuda()` method: its calls keep the name, and the class gets `npu = cuda` for the calls renamed.",
    """
    `def cuda(self)` in a user class (a batch or a wrapper that moves its tensors) is not torch's `.cuda()`: its
    body is ported as usual, so the method moves to the NPU. Calls known to reach it (`self.cuda()` inside the
    class, `batch.cuda()` where `batch = Batch(...)` in the module, `Batch(...).cuda()`) keep their name; calls on
    objects whose type the port cannot see (`[b.cuda() for b in batches]`) become `.npu()` like a tensor's, so the
    class gets `npu = cuda` after the method and they reach it too (an override of `nn.Module.cuda` then also runs
    for `.npu()`). A class with an `npu` of its own gets a TODO instead.

    Before:
        class Batch:
            def cuda(self):
                self.x = self.x.cuda()
                return self
        batch = Batch().cuda()
    After:
        class Batch:
            def cuda(self):
                self.x = self.x.npu()
                return self

            npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())
        batch = Batch().cuda()
    """,
)
USER_NPU_METHOD = rule(
    "NPU114",
    "user-npu-method",
    LOW,
    "A class with its own `cuda()` and `npu()`: a TODO, since the calls renamed to `.npu()` reach its `npu()`.",
    """
    NPU113 gives a class's own `cuda()` the alias `npu = cuda`, so the calls on objects of unknown type, renamed to
    `.npu()` like a tensor's, still reach it. A class that defines an `npu` of its own keeps it: those calls now
    run its `npu()` instead of its `cuda()`, which may do something else. The method gets a TODO.

    Before:
        class Batch:
            def cuda(self):
                return self
            def npu(self):
                raise RuntimeError("no NPU")
    After:
        class Batch:
            # TODO(ascend-port): NPU114 [low] Batch.cuda() is this class's own method and the class has its own ...
            def cuda(self):
                return self
            def npu(self):
                raise RuntimeError("no NPU")
    """,
)
TORCH_CUDA_UNSUPPORTED = rule(
    "NPU107",
    "torch-cuda-unsupported",
    LOW,
    "`torch.cuda.X` with no `torch.npu` counterpart: left unchanged, with a TODO naming the gap.",
    """
    Names such as `torch.cuda.memory_usage`, `torch.cuda.comm` or `torch.cuda.jiterator` do not exist in
    torch_npu. The code is not changed; a TODO comment marks it for a manual port. The same holds for
    `torch.backends.cuda`'s attention-kernel switches (`sdp_kernel`, `enable_flash_sdp`, ...), which torch_npu
    does not support.

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
    "CUDA capability checks (`get_device_capability()`, `get_device_properties().major`) stay CUDA checks: TODO.",
    """
    `torch.npu.get_device_capability()` returns None unless `TORCH_NPU_DEVICE_CAPABILITY` is set, so
    `cap[0] >= 8` raises TypeError; `get_device_properties(d).major/.minor/.multi_processor_count` do not exist
    (in a module that imports triton, triton-core-count ports `.multi_processor_count` instead).
    A probe whose result is indexed, unpacked, compared or has those attributes read (directly, or through the
    variable or `self.` attribute it is stored in, anywhere in the module) is a guard: it is never renamed to
    torch.npu, nor are its arguments, and this rule leaves a TODO: test the feature you need instead
    (`torch.npu.is_bf16_supported()`). The CUDA tests that lead to it stay CUDA tests too, so that on an NPU host
    the CUDA-only code is skipped instead of failing: a `torch.cuda.is_available()` or `x.device.type != "cuda"`
    in the same `and`/`or` chain, or in an early exit before it in the same block (`if not
    torch.cuda.is_available(): return ...`, `assert device.type == "cuda"`), or the test of an `if` around it. A name
    imported from torch.cuda for such a check keeps its import. An Ampere test that chooses bf16 is rewritten by
    NPU304, and an SM gate of a CUDA-only feature to `False` by NPU112. Any other use is renamed by NPU106 and keeps
    this TODO; since a guard stays a torch.cuda call, a later scan of the ported file reports every one again.

    Before:
        import torch
        major, minor = torch.cuda.get_device_capability()
    After:
        import torch
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: ...
        major, minor = torch.cuda.get_device_capability()
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

FEATURE_GATE = rule(
    "NPU112",
    "cuda-feature-gate",
    MEDIUM,
    "An SM gate of a CUDA-only feature (FP8, TF32, TMA, Triton, TensorRT, CUDA graphs, ...) -> `False`.",
    """
    A comparison of the compute capability that turns a feature on for new enough GPUs
    (`get_device_capability()[0] >= 9`, `get_device_capability() >= (8, 9)`, `get_device_properties(0).major == 9`),
    in an `if` test, an assignment or a `return` whose code (or the enclosing function's name) names a CUDA-only
    feature: FP8/NVFP4, TF32, TMA/WGMMA, Hopper or Blackwell, Triton, TensorRT, CUDA graphs, TileLang, CUTLASS,
    flash-attn, DeepGEMM. On an NPU the feature is off, so the comparison becomes `False` (the probe, which would
    return None there, is gone). Any other capability check keeps NPU108's TODO; an `assert` is never changed.
    Medium: the intent is read from names.

    Before:
        import torch
        use_fp8 = torch.cuda.get_device_capability() >= (8, 9)
    After:
        import torch
        use_fp8 = False
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
_DEFINITIONS_ATTRIBUTE = "_ascend_port_device_definitions"
# torch.backends.cuda's scaled-dot-product-attention kernel switches: unsupported by torch_npu (NPU107's TODO).
SDP_SWITCHES = {
    f"torch.backends.cuda.{name}"
    for name in (
        "sdp_kernel",
        "enable_flash_sdp",
        "enable_mem_efficient_sdp",
        "enable_math_sdp",
        "enable_cudnn_sdp",
        "flash_sdp_enabled",
        "mem_efficient_sdp_enabled",
        "math_sdp_enabled",
        "cudnn_sdp_enabled",
    )
}


def _user_cuda_classes(facts: ModuleFacts) -> tuple[frozenset[str], frozenset[str]]:
    """(classes of the module with a ``cuda`` method of their own, names assigned ``Cls(...)`` of one of them)."""
    classes = frozenset(
        node.name
        for node in facts.statements(ast.ClassDef)
        if any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "cuda" for item in node.body)
    )
    if not classes:
        return classes, frozenset()
    instances = frozenset(
        target.id
        for node in facts.statements(ast.Assign)
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id in classes
        for target in node.targets
        if isinstance(target, ast.Name)
    )
    return classes, instances


def _device_facts(facts: ModuleFacts, gaps: frozenset[str]) -> DeviceFacts | None:
    tree = facts.tree
    if tree is None:
        return None
    calls = functools.partial(facts.nodes, ast.Call)
    return DeviceFacts(tree, facts.imports.aliases, gaps, calls=calls, parent=facts.parent, text=facts.text)


# The device facts of a module, by the property reads that make a guard (see DeviceTransformer._gaps).
_DEVICE_FACTS = {
    gaps: functools.partial(_device_facts, gaps=gaps)
    for gaps in (PROPERTY_GAPS, PROPERTY_GAPS - {"multi_processor_count"})
}


def _is_cuda_method(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "cuda"


def _def_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """The lines a definition's finding may be on: its decorators' and its ``def``'s."""
    return set(range(min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.lineno + 1))


def _binds(cls: ast.ClassDef, name: str) -> bool:
    """Whether the class body defines ``name`` (a method, or an assignment)."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            return True
        targets = (
            item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _npu_alias(cls: ast.ClassDef) -> bool:
    """Whether the class body has ``npu = cuda`` (NPU113's alias)."""
    return any(
        isinstance(item, ast.Assign)
        and [t.id for t in item.targets if isinstance(t, ast.Name)] == ["npu"]
        and isinstance(item.value, ast.Name)
        and item.value.id == "cuda"
        for item in cls.body
    )


NPU_ALIAS = "npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())"


def _add_npu_aliases(text: str, tree: ast.Module, classes: set[str]) -> str:
    """``text`` with ``npu = cuda`` after the ``cuda`` method of each class named in ``classes`` that has no
    ``npu`` of its own."""
    lines = python_lines(text)
    at: list[tuple[int, str]] = []  # (index of the line after the method, its indent)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in classes and not _binds(node, "npu"):
            for item in node.body:
                if _is_cuda_method(item) and item.end_lineno is not None:
                    indent = lines[item.lineno - 1][: item.col_offset]
                    at.append((item.end_lineno, indent))
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for end, indent in sorted(at, reverse=True):
        if not lines[end - 1].endswith(("\n", "\r")):
            lines[end - 1] += newline
        lines.insert(end, newline + indent + NPU_ALIAS + newline)
    return "".join(lines)


CAPABILITY_TODO = "get_device_capability() returns None on NPU: test the feature, e.g. torch.npu.is_bf16_supported()"
CAPABILITY_KEPT_TODO = (
    "get_device_capability() returns None on NPU, so the call stays on torch.cuda: "
    "test the feature instead, e.g. torch.npu.is_bf16_supported()"
)
NPU_PROPERTIES = "only name, total_memory, L2_cache_size, cube_core_num, vector_core_num"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _descendants(child)


_CONTEXT_STATEMENTS = (cst.If, cst.While, cst.SimpleStatementLine)  # (what DeviceTransformer._statements holds)


def _chain_nodes(
    node: cst.CSTNode, comparison: cst.Comparison | None, statement: cst.CSTNode | None
) -> Iterator[tuple[cst.CSTNode, cst.Comparison | None, cst.CSTNode | None]]:
    """Every node under ``node``, each with the innermost comparison and `if`/`while`/simple statement around it."""
    statement = node if isinstance(node, _CONTEXT_STATEMENTS) else statement
    yield node, comparison, statement
    inner = node if isinstance(node, cst.Comparison) else comparison
    for child in node.children:
        yield from _chain_nodes(child, inner, statement)


def _uses_walk(
    node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...], statement: cst.CSTNode | None
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...], cst.CSTNode | None]]:
    """Every node under ``node`` with its ancestors and its innermost `if`/`while`/simple statement, skipping
    names that are not references (``.attr``, keywords)."""
    statement = node if isinstance(node, _CONTEXT_STATEMENTS) else statement
    yield node, ancestors, statement
    inner = (*ancestors, node)
    if isinstance(node, cst.Attribute):
        yield from _uses_walk(node.value, inner, statement)
        return
    for child in node.children:
        if isinstance(node, cst.Arg) and child is node.keyword:
            continue
        yield from _uses_walk(child, inner, statement)


def _use_as_gate(name: cst.Name, ancestors: tuple[cst.CSTNode, ...], kind: str) -> cst.Comparison | None:
    """The comparison when the probe's variable ``name`` is used as an SM gate: ``major >= 9`` ("version"),
    ``cap[0] >= 9`` or ``cap >= (8, 9)`` ("capability"), ``props.major == 9`` ("properties"); else None."""
    parents = list(ancestors)
    operand: cst.CSTNode = name
    if kind == "capability" and parents and isinstance(parents[-1], cst.Subscript) and parents[-1].value is name:
        operand = parents.pop()
    elif kind == "properties":
        if not (parents and isinstance(parents[-1], cst.Attribute) and parents[-1].attr.value in ("major", "minor")):
            return None
        operand = parents.pop()
    found = compared(operand, parents)
    if found is None:
        return None
    comparison, bound, operator, flipped = found
    if isinstance(bound, cst.Tuple) != (kind == "capability" and operand is name):
        return None
    return comparison if _version_bound(bound) and _turns_on(operator, flipped) else None


def _chain_operands(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of an and/or chain, nested chains flattened and `not` taken off."""
    if isinstance(node, cst.BooleanOperation):
        yield from _chain_operands(node.left)
        yield from _chain_operands(node.right)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _chain_operands(node.expression)
    else:
        yield node


def _version_bound(node: cst.BaseExpression) -> bool:
    """An SM version: ``9``, ``(8, 9)``, or a collection of them (``in (9, 10)``)."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and node.elements:
        return all(_version_bound(e.value) for e in node.elements if isinstance(e, cst.Element))
    return False


def _turns_on(operator: cst.BaseCompOp, flipped: bool) -> bool:
    """Is ``<probe> operator bound`` (``bound operator <probe>`` when flipped) true for new enough GPUs?"""
    if flipped:
        return isinstance(operator, (cst.LessThan, cst.LessThanEqual, cst.Equal))
    return isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.In))


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


def _names_device_option(call: cst.Call, names: re.Pattern[str] = DEVICE_NAME) -> bool:
    """``add_argument("--device", ...)`` (or ``dest="device"``): an option that holds a device, not a
    ``--backend``/``--impl`` whose choices merely include "cuda"."""
    for arg in call.args:
        if (arg.keyword is None or arg.keyword.value == "dest") and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            if isinstance(value, str) and names.search(value.lstrip("-")):
                return True
    return False


def _since(name: str) -> str:
    """``; in torch_npu 2.7.1.post11-2.14.0`` for a torch.npu name that other releases than the target have."""
    return f"; {npu_api.availability(f'torch.npu.{name}')}" if npu_api.first_release(name) else ""


class DeviceTransformer(PortTransformer):
    """NPU101-NPU112. One class because these rules meet on the same nodes (calls, attributes, strings)."""

    # Every name these rules rewrite is lower-case `cuda` (`.cuda()`, `torch.cuda`, "cuda:0", `is_cuda`) or one of
    # the upper-case environment variables; "CUDA" in prose and constants is not theirs.
    TRIGGERS = (
        r"cuda",
        r"cudnn",
        r"CUDA_(?:VISIBLE_DEVICES|LAUNCH_BLOCKING|ALLOC_CONF|MEMORY_CACHING)",
        # a probe's guards (its variable's uses, an early exit before it) are in its function (NPU108, NPU112)
        Trigger(r"get_device_(?:capability|properties)", outermost(*FUNCTIONS)),
    )
    RULES = (
        CUDA_METHOD,
        USER_CUDA_METHOD,
        USER_NPU_METHOD,
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
        FEATURE_GATE,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.target_api(ctx.options)  # the target release (--torch-npu): what torch.npu has there
        # Nodes that are not expressions of their own: `.attr` names, keyword names, store targets, docstrings.
        self._attribute_bases: set[int] = set()
        self._members: dict[int, str] = {}  # the attribute read off each expression (`priority_range` of `X.Stream`)
        self._store_targets: set[int] = set()
        self._docstrings: set[int] = set()
        self._in_import = False  # import statements are rewritten whole, by leave_Import/leave_ImportFrom
        # `from torch import cuda` binds the name `cuda`; it becomes `from torch import npu`, so its uses follow.
        self._rename_cuda_name = ctx.imports.aliases.get("cuda") == "torch.cuda"
        # In a module that imports Lightning, `accelerator` is Lightning's accelerator name, which rejects "npu".
        lightning = library_support.imports_lightning(ctx.imports.aliases)
        self._device_name = library_support.DEVICE_NAME_IN_LIGHTNING if lightning else DEVICE_NAME
        self._device_operand = library_support.DEVICE_OPERAND_IN_LIGHTNING if lightning else DEVICE_OPERAND
        # Guards (NPU108, NPU112): capability probes kept as CUDA calls, with everything inside them (a depth, since
        # leave_Call and leave_Attribute of what is inside run before the probe's own leave_Call), the
        # `torch.cuda.is_available()` calls of their and/or chains, the probes visit_Call looked at, the
        # properties attributes read right off a probe, and the SM gates NPU112 turns off (with their probes).
        self._keep_depth = 0
        self._kept_calls: set[int] = set()
        self._kept_attributes: set[int] = set()
        self._probe_functions: set[int] = set()
        self._read_off_call: dict[int, str] = {}
        self._gates: dict[int, cst.Call | None] = {}
        self._gate_calls: set[int] = set()
        self._off: set[int] = set()  # comparisons NPU112 turns into False
        self._removed: set[int] = set()  # probe assignments NPU112 removes
        self._kept_comparisons: set[int] = set()  # device comparisons of a chain with a kept guard
        self._chains: set[int] = set()
        self._statements: list[cst.CSTNode] = []  # the enclosing `if`/`while` statements and simple statement lines
        self._reads_triton = any(t == "triton" or t.startswith("triton.") for t in ctx.imports.aliases.values())
        # In Triton launch code CORE_COUNT turns `.multi_processor_count` into the NPU's core count: no guard there.
        sm_count = self._reads_triton and ctx.selection.enabled(CORE_COUNT)
        self._gaps = PROPERTY_GAPS - {"multi_processor_count"} if sm_count else PROPERTY_GAPS

    # --- bookkeeping -------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attribute_bases.add(id(node.value))
        self._members[id(node.value)] = node.attr.value
        if node.attr.value in self._gaps and isinstance(node.value, cst.Call):
            self._read_off_call[id(node.value)] = f".{node.attr.value}"

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def leave_SimpleStatementLine(self, original, updated):
        self._statements.pop()
        return updated

    def visit_If(self, node: cst.If) -> None:
        self._statements.append(node)
        # `if torch.cuda.is_available():` around a probe kept as a CUDA call stays a CUDA test (NPU108): renamed, it
        # would lead an NPU host into the torch.cuda call, which fails there.
        if not self._keep_depth and self._cuda_test(node.test) and self._has_kept_guard(node.body):
            self._keep_availability(node.test)

    def leave_If(self, original, updated):
        self._statements.pop()
        return updated

    def visit_While(self, node: cst.While) -> None:
        self._statements.append(node)

    def leave_While(self, original, updated):
        self._statements.pop()
        return updated

    def _facts(self) -> DeviceFacts | None:
        """The whole module's facts (None when Python's ``ast`` cannot read it), read once per file."""
        return self.ctx.fact(_DEVICE_FACTS[self._gaps])

    def _definitions(self) -> Definitions | None:
        """The functions around the lines being ported: the module head has them all (every trigger is in it)."""
        head = self.ctx.module_head
        if head is None:
            facts = self._facts()
            return facts.definitions if facts is not None else None
        definitions = getattr(head, _DEFINITIONS_ATTRIBUTE, None)
        if definitions is None:
            definitions = Definitions(head)
            setattr(head, _DEFINITIONS_ATTRIBUTE, definitions)
        return definitions

    # --- NPU108, NPU112: capability probes and the guards they feed --------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.imports.resolve(node.func)
        if qualified not in PROBES or self.ctx.claimed_by(node.func) is not None:
            return  # (claimed: NPU304 rewrites a bf16 check)
        self._probe_functions.add(id(node.func))
        if id(node) in self._gate_calls:
            self._keep(node)  # NPU112 replaces the whole comparison: nothing inside it is ported on its own
            return
        used = self._guard_use(node, qualified)
        capability = qualified in CAPABILITY_CALLS
        if used is None:
            if capability:
                self.todo(DEVICE_CAPABILITY, node, CAPABILITY_TODO)
            return
        kept = qualified.startswith("torch.cuda.") and self._spelled_as_cuda(node.func)
        if kept:
            self._keep(node)
        if capability:
            message = CAPABILITY_KEPT_TODO if kept else CAPABILITY_TODO
        else:
            message = f"NPU device properties have no {used} ({NPU_PROPERTIES})" + (
                ", so the call stays on torch.cuda: test the feature instead" if kept else ": test the feature instead"
            )
        self.todo(DEVICE_CAPABILITY, node, message)

    def _keep(self, call: cst.Call) -> None:
        self._kept_calls.add(id(call))
        self._keep_depth += 1

    def _guard_use(self, call: cst.Call, qualified: str) -> str | None:
        """How the probe's result is used as a guard ("" for a capability, ".major/.minor" for properties), else
        None. Read from the whole module (a variable may be read far away); where Python's ``ast`` cannot read
        it, a capability is taken for a guard and properties only where an attribute is read right off the call."""
        facts = self._facts()
        direct = self._read_off_call.get(id(call))
        if facts is None:
            return "" if qualified in CAPABILITY_CALLS else direct
        return facts.guard(self.ctx.line_of(call.func)) if direct is None else direct

    def _spelled_as_cuda(self, func: cst.BaseExpression) -> bool:
        """``torch.cuda.X`` (a CUDA probe this rule keeps by not renaming it) or a name imported from torch.cuda
        (whose import is kept for it); not ``tc.X`` through ``import torch.cuda as tc``, whose import is renamed."""
        if isinstance(func, cst.Attribute):
            return isinstance(func.value, cst.Attribute) and func.value.attr.value == "cuda"
        return isinstance(func, cst.Name)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        statement = self._statements[-1] if self._statements else None
        if (call := self._gate_probe(node, statement)) is not None:
            self._gate_calls.add(id(call))
            self._off.add(id(node))

    def _gate_probe(self, node: cst.Comparison, statement: cst.CSTNode | None) -> cst.Call | None:
        """The probe of an SM gate of a CUDA-only feature (NPU112): ``cap()[0] >= 9``, ``cap() >= (8, 9)``,
        ``props().major == 9`` (either side), in an `if` test or a simple statement (never an `assert`) whose code,
        or the enclosing function's name, names such a feature (and not bf16: NPU304's). Memoized: the chains
        and blocks around it ask first."""
        if id(node) not in self._gates:
            self._gates[id(node)] = self._find_gate_probe(node, statement)
        return self._gates[id(node)]

    def _find_gate_probe(self, node: cst.Comparison, statement: cst.CSTNode | None) -> cst.Call | None:
        if not self.enabled(FEATURE_GATE) or len(node.comparisons) != 1:
            return None
        target = node.comparisons[0]
        for side, bound, flipped in ((node.left, target.comparator, False), (target.comparator, node.left, True)):
            call = self._probe_of(side)
            if (
                call is not None
                and self.ctx.claimed_by(call.func) is None
                and _version_bound(bound)
                and _turns_on(target.operator, flipped)
                and self._context(node, statement) == "feature"
            ):
                return call
        return None

    def _probe_of(self, expr: cst.BaseExpression) -> cst.Call | None:
        """The probe call of ``cap()``, ``cap()[0]`` or ``props().major``/``.minor``."""
        if isinstance(expr, cst.Subscript):
            expr = expr.value
            probes = CAPABILITY_CALLS
        elif isinstance(expr, cst.Attribute) and expr.attr.value in ("major", "minor"):
            expr = expr.value
            probes = PROPERTIES_CALLS
        else:
            probes = CAPABILITY_CALLS
        if isinstance(expr, cst.Call) and self.ctx.imports.resolve(expr.func) in probes:
            return expr
        return None

    def _context(self, comparison: cst.Comparison, statement: cst.CSTNode | None) -> str | None:
        """What a capability comparison is about: "bf16" (NPU304's, whatever its shape), "feature" (a CUDA-only
        feature, NPU112's), or None. Read from the `if` it tests (test and body) or its simple statement (never an
        `assert`), and the names of the functions around it."""
        if isinstance(statement, cst.If) and any(n is comparison for n in _descendants(statement.test)):
            text = _code(statement.test) + "\n" + _code(statement.body)
        elif isinstance(statement, cst.SimpleStatementLine) and not any(
            isinstance(s, cst.Assert) for s in statement.body
        ):
            text = _code(statement)
        else:
            return None
        text = "\n".join(line for line in text.splitlines() if "TODO(ascend-port)" not in line)
        definitions = self._definitions()
        names = [f.name for f, _ in definitions.around(self.ctx.line_of(comparison))] if definitions else []
        if BF16_WORD.search(text) or any(BF16_WORD.search(n) for n in names):
            return "bf16"
        if CUDA_FEATURE.search(text) or any(CUDA_FEATURE.search(n) for n in names):
            return "feature"
        return None

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """NPU112's variable form (``major, minor = cap()`` or ``props = get_device_properties(0)`` whose every
        later use in the block is an SM gate of a CUDA-only feature: the gates become False and the probe goes),
        and the early exit before a kept guard (``if not torch.cuda.is_available(): return`` stays CUDA)."""
        if self._keep_depth:
            return
        body = list(node.body)
        bf16: bool | None = None
        for i, stmt in enumerate(body):
            found = self._probe_assignment(stmt)
            if found is None or self.ctx.claimed_by(found[0].func) is not None:
                continue
            if bf16 is None:
                bf16 = self._mentions_bf16(node)
            if bf16:
                break  # NPU304 may remove a statement of this block: two removals in one block would not line up
            gates = self._gate_uses(body[i + 1 :], found[1])
            if gates:
                self._off.update(gates)
                self._removed.add(id(stmt))
                self._gate_calls.add(id(found[0]))
        for i, stmt in enumerate(body[:-1]):
            test = self._early_exit(stmt)
            if test is not None and any(self._has_kept_guard(later) for later in body[i + 1 :]):
                self._keep_availability(test)

    def _probe_assignment(self, stmt: cst.BaseStatement) -> tuple[cst.Call, dict[str, str]] | None:
        """``x = cap()`` -> (call, {x: "capability"}); ``major, minor = cap()`` and ``major = cap()[0]`` ->
        (call, {major: "version", ...}); ``props = get_device_properties(0)`` -> (call, {props: "properties"})."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        assign = stmt.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target, value = assign.targets[0].target, assign.value
        resolve = self.ctx.imports.resolve
        if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
            names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
            if isinstance(value, cst.Call) and resolve(value.func) in CAPABILITY_CALLS and len(names) == 2:
                return value, {n: "version" for n in names if n != "_"}
            return None
        if not isinstance(target, cst.Name):
            return None
        if isinstance(value, cst.Call) and resolve(value.func) in PROBES:
            kind = "capability" if resolve(value.func) in CAPABILITY_CALLS else "properties"
            return value, {target.value: kind}
        call = self._probe_of(value)
        if call is not None and call is not value:
            return call, {target.value: "version"}
        return None

    def _gate_uses(self, stmts: list[cst.BaseStatement], kinds: dict[str, str]) -> set[int]:
        """The ids of the SM gates that are every use of the names ``kinds`` in ``stmts``; empty if any use is not
        one (or there is none)."""
        gates: set[int] = set()
        for stmt in stmts:
            for node, ancestors, statement in _uses_walk(stmt, (), None):
                if not isinstance(node, cst.Name) or node.value not in kinds:
                    continue
                comparison = _use_as_gate(node, ancestors, kinds[node.value])
                if comparison is None or self._context(comparison, statement) != "feature":
                    return set()
                gates.add(id(comparison))
        return gates

    def _mentions_bf16(self, block: cst.IndentedBlock) -> bool:
        """Does the block's code (our TODOs aside) or a function around it say bf16 (NPU304's evidence)?"""
        if any(BF16_WORD.search(line) for line in _code(block).splitlines() if "TODO(ascend-port)" not in line):
            return True
        definitions = self._definitions()
        around = definitions.around(self.ctx.line_of(block)) if definitions is not None else []
        return any(BF16_WORD.search(f.name) for f, _ in around)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if not any(id(s) in self._removed for s in original.body):
            return updated
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for old, new in zip(original.body, updated.body):
            if not isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                body.append(new)
                continue
            if id(old) in self._removed and self.fix(
                FEATURE_GATE, old, True, "capability probe removed (only used by SM gates of CUDA-only features)"
            ):
                carried += list(new.leading_lines)  # its comments stay, above the next statement
                continue
            if carried:
                if any(line.comment for line in carried) or not new.leading_lines:
                    new = new.with_changes(leading_lines=[*carried, *new.leading_lines])
                carried = []
            body.append(new)
        return updated.with_changes(body=body)

    def _early_exit(self, stmt: cst.BaseStatement) -> cst.BaseExpression | None:
        """The test of ``if not torch.cuda.is_available(): return ...`` (or raise, without else) or of ``assert
        x.device.type == "cuda"``, when it tests CUDA: the rest of the block is CUDA-only."""
        test: cst.BaseExpression | None = None
        if isinstance(stmt, cst.If) and stmt.orelse is None and stmt.body.body:
            last: cst.CSTNode = stmt.body.body[-1]
            if isinstance(last, cst.SimpleStatementLine):
                last = last.body[-1]
            test = stmt.test if isinstance(last, (cst.Return, cst.Raise)) else None
        elif isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assert):
            test = stmt.body[0].test
        return test if test is not None and self._cuda_test(test) else None

    def _cuda_test(self, test: cst.BaseExpression) -> bool:
        """Does the and/or chain ``test`` ask about CUDA (`torch.cuda.is_available()`, a CUDA device string)?"""
        return any(
            self._is_availability(operand)
            or (
                isinstance(operand, cst.Comparison)
                and any(
                    isinstance(n, (cst.SimpleString, cst.FormattedString)) and rewrite_device_expr(n) is not None
                    for n in _descendants(operand)
                )
            )
            for operand in _chain_operands(test)
        )

    def _is_availability(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.ctx.imports.resolve(node.func) == "torch.cuda.is_available"

    def _has_kept_guard(self, node: cst.CSTNode) -> bool:
        return any(
            isinstance(child, cst.Call) and self._kept_guard(child, comparison, statement)
            for child, comparison, statement in _chain_nodes(node, None, None)
        )

    def _keep_availability(self, test: cst.BaseExpression) -> None:
        """The CUDA tests of a chain stay: `torch.cuda.is_available()` and comparisons with device strings."""
        for operand in _chain_operands(test):
            if self._is_availability(operand):
                assert isinstance(operand, cst.Call)
                self._kept_attributes.add(id(operand.func))
            elif isinstance(operand, cst.Comparison):
                self._kept_comparisons.add(id(operand))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """In ``torch.cuda.is_available() and <a kept CUDA guard>`` (or ``not ... or``, or ``x.device.type !=
        "cuda" or ...``) the other CUDA tests stay too: on an NPU host they are False (True), so the CUDA-only
        guard after them never runs."""
        if id(node) in self._chains or self._keep_depth:
            return
        statement = self._statements[-1] if self._statements else None
        kept = False
        for child, comparison, inner in _chain_nodes(node, None, statement):
            if isinstance(child, cst.BooleanOperation):
                self._chains.add(id(child))
            elif isinstance(child, cst.Call):
                kept = kept or self._kept_guard(child, comparison, inner)
        if kept:
            self._keep_availability(node)

    def _kept_guard(self, call: cst.Call, comparison: cst.Comparison | None, statement: cst.CSTNode | None) -> bool:
        """Will visit_Call keep this probe as a CUDA call (not NPU304's bf16 check, nor an NPU112 gate)?"""
        qualified = self.ctx.imports.resolve(call.func)
        if (
            qualified not in PROBES
            or not qualified.startswith("torch.cuda.")
            or self.ctx.claimed_by(call.func) is not None
        ):
            return False
        if id(call) in self._gate_calls:
            return False
        if comparison is not None and (
            self._gate_probe(comparison, statement) is call or self._context(comparison, statement) == "bf16"
        ):
            return False
        return self._spelled_as_cuda(call.func) and self._guard_use(call, qualified) is not None

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
        if self._in_import or self.ctx.claimed_by(original) is not None:
            return updated  # claimed: a later rule rewrites the whole construct (NPU304's bf16 checks)
        if self._keep_depth or id(original) in self._kept_attributes:
            return updated  # a CUDA guard, kept as it is (NPU108)
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
        if qualified in SDP_SWITCHES and id(original) not in self._attribute_bases:
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"{qualified} has no effect on NPU (torch_npu does not support it): drop it, or select the math "
                "kernel with torch.nn.attention.sdpa_kernel and torch_npu.npu.use_compatible_impl(True)",
            )
            return updated
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
        if name in AVAILABILITY and self._answers_for_cuda(original):
            return updated  # `def is_cuda_available(): return torch.cuda.is_available()` keeps answering for CUDA
        member = self._members.get(id(original))
        if member and npu_api.name_status(f"torch.npu.{name}.{member}", self.api.version) is False:
            # `torch.cuda.Stream.priority_range()`: the class is there, the member is not; a rename would only
            # move the failure (NPU190 would flag it), so the code stays with a TODO saying what is missing.
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{name}.{member} has no torch.npu counterpart (torch_npu {self.api.version}; "
                f"{npu_api.availability(f'torch.npu.{name}.{member}')}): port by hand",
            )
            return updated
        if not self.api.has(name):
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{name} has no torch.npu counterpart (torch_npu {self.api.version}{_since(name)}): port by "
                "hand",
            )
            return updated
        if name == "get_device_capability" and id(original) not in self._probe_functions:
            self.todo(DEVICE_CAPABILITY, original, CAPABILITY_TODO)  # (a call's TODO is visit_Call's)
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

    def fix(self, rule, original: cst.CSTNode, replacement, message: str, *, torch_npu_name: bool = False):
        if self._in_cuda_question(original):
            return None  # `def is_cuda_available()`, `def get_cuda_capability()` keep answering for CUDA
        return super().fix(rule, original, replacement, message, torch_npu_name=torch_npu_name)

    def todo(self, rule, original: cst.CSTNode, message: str) -> None:
        if not self._in_cuda_question(original):
            super().todo(rule, original, message)

    def _in_cuda_question(self, node: cst.CSTNode) -> bool:
        definitions = self._definitions()
        return definitions is not None and definitions.asks_about_cuda(self.ctx.line_of(node))

    def _answers_for_cuda(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a function named for a CUDA question (`is_cuda_available`, `has_cuda`) or in an op
        builder's `is_compatible`? Their availability tests keep asking about CUDA."""
        definitions = self._definitions()
        return definitions is not None and definitions.answers_for_cuda(self.ctx.line_of(node))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self._rename_cuda_name and original.value == "cuda" and id(original) in self._attribute_bases:
            return self.fix(TORCH_CUDA_API, original, updated.with_changes(value="npu"), "cuda -> npu") or updated
        return updated

    # --- imports ------------------------------------------------------------------------------------------------

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.BaseSmallStatement:
        self._in_import = False
        if (submodule := self._cuda_submodule_alias(original, updated)) is not None:
            return submodule
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

    def _cuda_submodule_alias(self, original: cst.Import, updated: cst.Import) -> cst.ImportFrom | None:
        """`import torch.cuda.amp as amp` -> `from torch.npu import amp`: torch_npu registers `torch.npu` as a
        module, not its submodules; `import torch.npu.amp` would load a second copy of torch_npu's amp package."""
        (alias, *rest) = updated.names
        module = dotted(alias.name) or ""
        if rest or alias.asname is None or not module.startswith("torch.cuda.") or module.count(".") != 2:
            return None
        name = module.rsplit(".", 1)[1]
        if not self.api.has_path(name) or not isinstance(alias.asname.name, cst.Name):
            return None
        asname = None if alias.asname.name.value == name else alias.asname
        new = cst.ImportFrom(
            module=cst.Attribute(cst.Name("torch"), cst.Name("npu")),
            names=[cst.ImportAlias(name=cst.Name(name), asname=asname)],
        )
        return self.fix(TORCH_CUDA_API, original, new, f"import {module} as ... -> from torch.npu import {name}")

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
        for name in imported:
            if f"{module}.{name}" in SDP_SWITCHES:
                self.todo(
                    TORCH_CUDA_UNSUPPORTED,
                    original,
                    f"{module}.{name} has no effect on NPU (torch_npu does not support it): drop its uses",
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
        facts = self._facts() if not sub and PROBE_NAMES.intersection(imported) else None
        guards = [n for n in imported if facts is not None and facts.guarded(f"torch.cuda.{n}")]
        if guards:
            self.todo(
                DEVICE_CAPABILITY,
                original,
                f"{', '.join(guards)} stays imported from torch.cuda for this module's CUDA capability checks "
                "(torch.npu's returns None or lacks .major/.minor): test the feature instead",
            )
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

    # --- NPU113: a class's own cuda() --------------------------------------------------------------------------

    def _user_cuda(self) -> tuple[frozenset[str], frozenset[str]]:
        """(the module's classes that define ``cuda``, the names bound to an instance of one), read once per file."""
        return self.ctx.fact(_user_cuda_classes)

    def _reaches_user_cuda(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        classes, instances = self._user_cuda()
        if not classes:
            return False
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):
            return receiver.func.value in classes  # Batch(...).cuda()
        if not isinstance(receiver, cst.Name):
            return False
        if receiver.value in instances:
            return True
        definitions = self._definitions()
        if receiver.value != "self" or definitions is None:
            return False
        around = definitions.around(self.ctx.line_of(call))
        return bool(around) and around[-1][1] is not None and around[-1][1].name in classes

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "cuda":
            return
        definitions = self._definitions()
        around = definitions.around(self.ctx.line_of(node.body)) if definitions is not None else []
        cls = around[-1][1] if around and around[-1][0].name == "cuda" else None
        if cls is None or _npu_alias(cls):
            return  # (ported before: the alias is there)
        if _binds(cls, "npu"):
            self.todo(
                USER_NPU_METHOD,
                node,
                f"{cls.name}.cuda() is this class's own method and the class has its own npu(): calls on objects "
                "of unknown type are renamed to .npu(), which reaches npu(), not cuda(): check them",
            )
        else:  # the alias itself is written by finish(), once the whole module is ported
            self.fix(USER_CUDA_METHOD, node, node, f"{cls.name}.cuda(): `npu = cuda` added for the calls renamed")

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        found = {f.line: i for i, f in enumerate(ctx.findings) if f.rule is USER_CUDA_METHOD and f.kind == "rewrite"}
        original = ctx.module() if found else None
        if original is None:
            return text
        classes: set[str] = set()
        for cls_node in ctx.facts().statements(ast.ClassDef):
            for item in cls_node.body:
                if not _is_cuda_method(item) or item.end_lineno is None:
                    continue
                line = next((n for n in sorted(_def_lines(item)) if n in found), None)
                if line is None:
                    continue
                classes.add(cls_node.name)
                # The finding goes where the alias does (before the line after the method), so the reports give that
                # edit its rule.
                i = found[line]
                ctx.findings[i] = dataclasses.replace(ctx.findings[i], line=item.end_lineno + 1)
        return _add_npu_aliases(text, tree(), classes)

    # --- calls: .cuda(), device arguments ----------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._keep_depth:
            if id(original) in self._kept_calls:
                self._keep_depth -= 1
            return updated  # a CUDA guard (or inside one), kept as it is
        func = original.func
        qualified = self.ctx.imports.resolve(func)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "cuda" and qualified is None and self._reaches_user_cuda(func.value, original):
                pass  # the class's own cuda() (NPU113): there is no npu() on it
            elif method == "cuda" and qualified is None and _has_cuda_signature(original):
                new_func = updated.func.with_changes(attr=cst.Name("npu"))
                updated = (
                    self.fix(CUDA_METHOD, original, updated.with_changes(func=new_func), ".cuda() -> .npu()") or updated
                )
            elif method == "to" and qualified is None:
                updated = self._device_positional(original, updated, 0)
            elif method == "startswith" and self._device_context(func.value):
                updated = self._rewrite_args(original, updated, DEVICE_COMPARISON, positions={0})
            elif method == "add_argument" and _names_device_option(original, self._device_name):
                updated = self._rewrite_args(original, updated, DEVICE_SETTING, keywords={"default", "choices"})
        if qualified in DEVICE_FIRST_ARG or (qualified or "").replace(".npu.", ".cuda.") in DEVICE_FIRST_ARG:
            updated = self._device_positional(original, updated, 0)
            if qualified == "torch.device":
                updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords={"type"})
        elif qualified == "torch.load":
            updated = self._device_positional(original, updated, 1)
        updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords=DEVICE_KEYWORDS)
        return self._rewrite_args(original, updated, DEVICE_SETTING, keyword_filter=self._device_name)

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
            if arg.star or (i < len(original.args) and self.ctx.claimed_by(original.args[i].value) is not None):
                continue  # (claimed: a later rule ports this argument, e.g. NPU806's lm-eval device "npu:0")
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

    def _device_context(self, expr: cst.BaseExpression) -> bool:
        """Does ``expr``, compared with a "cuda" string, hold a device type: a device, `.type`, an accelerator?
        Anything else ("cuda" as a library's backend, an implementation's or a mode's name) is not ours, nor is
        Triton's target name (`get_current_target().backend`, and the variables and functions that hold it)."""
        return bool(self._device_operand.search(_code(expr))) and not self._holds_triton_target(expr)

    def _holds_triton_target(self, expr: cst.BaseExpression) -> bool:
        if not self._reads_triton:
            return False
        names: set[str] = set()
        calls: set[str] = set()
        for node, _, _ in _uses_walk(expr, (), None):
            if isinstance(node, cst.Name):
                names.add(node.value)
            elif isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, (cst.Name, cst.Attribute)):
                    calls.add(func.value if isinstance(func, cst.Name) else func.attr.value)
        facts = self._facts()
        return facts is not None and facts.triton_target(names, calls, self.ctx.line_of(expr))

    # --- comparisons, settings, environment variables -----------------------------------------------------------

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        if id(original) in self._off:
            off = cst.Name("False", lpar=updated.lpar, rpar=updated.rpar)
            return self.fix(FEATURE_GATE, original, off, "SM gate of a CUDA-only feature -> False") or updated
        if self._keep_depth or id(original) in self._kept_comparisons:
            return updated
        operands = [original.left, *(t.comparator for t in original.comparisons)]
        new_operands: list[cst.BaseExpression] = [updated.left, *(t.comparator for t in updated.comparisons)]
        changed = False
        for i, target in enumerate(original.comparisons):
            if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
                continue
            # the string on either side of the operator (a container only on the right: `device in ("cuda", ...)`)
            for index, other, kinds in (
                (i, operands[i + 1], (cst.SimpleString, cst.FormattedString)),
                (i + 1, operands[i], (cst.SimpleString, cst.FormattedString, cst.Tuple, cst.List, cst.Set)),
            ):
                if not isinstance(operands[index], kinds) or isinstance(other, kinds):
                    continue
                if (new := rewrite_device_expr(new_operands[index])) is not None and self._device_context(other):
                    new_operands[index] = new
                    changed = True
        if not changed:
            return updated
        targets = [t.with_changes(comparator=c) for t, c in zip(updated.comparisons, new_operands[1:])]
        replacement = updated.with_changes(left=new_operands[0], comparisons=targets)
        return self.fix(DEVICE_COMPARISON, original, replacement, "device comparison cuda -> npu") or updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if any(self._names_device(t.target) for t in original.targets) and not self._holds_triton_target(
            original.value
        ):
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
        if updated.default is not None and self._device_name.search(original.name.value):
            if (new := rewrite_device_expr(updated.default, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(default=new), "device default cuda -> npu")
                    or updated
                )
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        key = original.key
        if isinstance(key, cst.SimpleString) and self._device_name.search(str(key.evaluated_value)):
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

    def _names_device(self, target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return bool(self._device_name.search(target.value))
        if isinstance(target, cst.Attribute):
            return bool(self._device_name.search(target.attr.value))
        return False
