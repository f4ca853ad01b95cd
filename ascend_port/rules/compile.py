"""NPU70x: compile, graphs and profiling. NVTX -> mstx, CUDA graphs -> NPU graphs, torch.compile backends and
settings, torch.profiler -> torch_npu.profiler.

`torch.backends.cudnn.benchmark/deterministic/enabled` are accepted and harmless on NPU: no rule touches them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of
from ascend_port.python.definitions import bound_name, insert_definitions
from ascend_port.python.names import build_dotted, dotted, names_in
from ascend_port.python.scopes import Trigger, imported
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.device.torch_cuda import TORCH_CUDA_UNSUPPORTED

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

NVTX = rule(
    "NPU700",
    "nvtx-to-mstx",
    HIGH,
    "`torch.cuda.nvtx.range_push/range_pop/mark/range_start/range_end/range` -> `torch_npu.npu.mstx` "
    "(`range` -> `annotate`).",
    """
    NVTX ranges and marks become MindStudio Tools Extension (mstx) ranges and marks, which the Ascend profiler
    records. `torch_npu.npu.mstx` has `range_push(message)`, `range_pop()`, `mark(message)`, `range_start(message)`
    and `range_end(range_id)`, and `annotate(message)` as the context manager and decorator that
    `torch.cuda.nvtx.range(message, *args)` is (the format arguments are applied with `str.format`, as NVTX
    does). `from torch.cuda import nvtx` and `import torch.cuda.nvtx as nvtx` import mstx under the same name.
    Only what the target torch-npu release has is written (`--torch-npu`): range_push, range_pop and annotate came
    with 2.7.1 (and are missing from 2.8.0 and 2.9.1): for such a target, `range_push`/`range_pop` call two helpers
    written once in the module, `_npu_range_push`/`_npu_range_pop`, which keep a stack of `range_start` ids (and
    return the stack depth, as NVTX does); any other NVTX call the target has no counterpart for stays with a TODO
    naming the releases that have it and what this one offers instead.

    Before:
        import torch
        torch.cuda.nvtx.range_push("forward")
        with torch.cuda.nvtx.range("step {}", step):
            loss = model(batch)
    After:
        import torch
        import torch_npu
        torch_npu.npu.mstx.range_push("forward")
        with torch_npu.npu.mstx.annotate("step {}".format(step)):
            loss = model(batch)
    """,
)
CUDA_GRAPHS = rule(
    "NPU701",
    "cuda-graphs",
    MEDIUM,
    "`torch.cuda.CUDAGraph/graph/make_graphed_callables/graph_pool_handle/is_current_stream_capturing` -> the "
    "`torch.npu` graph API (inference only).",
    """
    torch_npu captures and replays NPU graphs (ACL graphs) with the same API: `torch.npu.NPUGraph`,
    `torch.npu.graph`, `torch.npu.make_graphed_callables`, `torch.npu.graph_pool_handle` and
    `torch.npu.is_current_stream_capturing`. torch_npu documents them for inference only ("当前仅支持推理场景，
    不支持训练场景"), hence medium confidence: a graph captured around a training step (backward, optimizer
    step) needs a different plan, and such a `with torch.cuda.graph(...)` block gets a TODO saying so.

    Before:
        import torch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(x)
    After:
        import torch
        g = torch.npu.NPUGraph()
        with torch.npu.graph(g):
            out = model(x)
    """,
)
COMPILE_BACKEND = rule(
    "NPU702",
    "compile-npugraphs",
    MEDIUM,
    '`torch.compile(backend="cudagraphs")` -> `backend="npugraphs"`.',
    """
    torch_npu registers the `npugraphs` dynamo backend (ACL graph capture and replay), the NPU counterpart of
    `cudagraphs`; `torch._dynamo.optimize("cudagraphs")` is rewritten too. Like CUDA graphs, it suits inference
    with static shapes.

    Before:
        import torch
        model = torch.compile(model, backend="cudagraphs")
    After:
        import torch
        model = torch.compile(model, backend="npugraphs")
    """,
)
COMPILE_SETTINGS = rule(
    "NPU703",
    "compile-cuda-settings",
    LOW,
    "`torch.compile` settings that assume inductor on CUDA (max-autotune, TensorRT backends, CUDA inductor "
    "options): TODO.",
    """
    `mode="max-autotune"` autotunes inductor's CUDA Triton templates and uses CUDA graphs; `backend="tensorrt"`
    is NVIDIA-only; `options=` keys such as `triton.cudagraphs` or `max_autotune` configure inductor's CUDA code
    generation. On NPU, torch.compile's default inductor backend generates code for the NPU, `npugraphs` and
    `npugraph_ex` capture ACL graphs, and TorchAir (`torchair.get_npu_backend()`) compiles whole graphs. The call
    is left unchanged with a TODO. (`torch.backends.cudnn` flags are harmless on NPU and get nothing.)

    Before:
        import torch
        model = torch.compile(model, mode="max-autotune")
    After:
        import torch
        # TODO(ascend-port): NPU703 [low] torch.compile mode="max-autotune" tunes inductor's CUDA templates ...
        model = torch.compile(model, mode="max-autotune")
    """,
)
COMPILE_GRAPHS_TRAINING = rule(
    "NPU706",
    "compile-graphs-training",
    MEDIUM,
    '`torch.compile(mode="reduce-overhead")` in a module that trains: the mode becomes `"default"` on the NPU '
    "(NPU graphs capture no backward pass).",
    """
    `mode="reduce-overhead"` makes inductor capture CUDA graphs. torch_npu (2.6.0 and later) redirects that capture
    to NPU graphs (its npugraph trees, ACL graphs), which TorchAir documents as an experimental, inference-oriented
    mode: no capture of the backward pass, no random-number ops, no `dynamic=True`, Atlas A2/A3 only (torch_npu
    2.5.1 and older skip the capture on a non-CUDA device). So where the module trains (it calls `backward()`), the
    mode is not carried to the NPU: in a project that keeps its other devices (the default) the mode is chosen at
    run time, `"default"` where torch.npu is available and the original elsewhere; with `--other-devices drop` the
    `mode=` argument is removed. An inference module keeps `mode="reduce-overhead"` (NPU graphs through inductor).
    See NPU707 for torch.compile in training on the NPU.

    Before:
        import torch
        model = torch.compile(model, mode="reduce-overhead")
        model(x).sum().backward()
    After:
        import torch
        # TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train ...
        model = torch.compile(model, mode="default" if hasattr(torch, "npu") and torch.npu.is_available() else "reduce-overhead")
        model(x).sum().backward()
    """,
)
COMPILE_TRAINING = rule(
    "NPU707",
    "compile-training",
    LOW,
    "`torch.compile` in a module that trains (calls `backward()`): TODO, training on the NPU starts eager; "
    "compile (inductor with triton-ascend, or TorchAir) is a choice to validate by hand.",
    """
    On the NPU, torch.compile's default inductor backend generates NPU code through triton-ascend (TorchNPU 7.3.0
    and later), and TorchAir (`backend=torchair.get_npu_backend()`) compiles graphs through Ascend IR, or runs
    eagerly where it does not support the model. Which of them a training run can use depends on the model, the
    torch-npu release and the CANN toolkit, so a static port does not choose: each `torch.compile(...)` and
    `torch._dynamo.optimize(...)` of a module that calls `backward()` keeps its call with a TODO. Train eagerly
    first (drop the call, or pass `disable=True`), then try a compiled run and compare the losses. A call that
    passes `disable=` already gets nothing. (Inference modules get no TODO: NPU710 gives them TorchAir's backend.)

    Before:
        import torch
        model = torch.compile(model)
        model(x).sum().backward()
    After:
        import torch
        # TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train ...
        model = torch.compile(model)
        model(x).sum().backward()
    """,
)
COMPILE_INFERENCE_BACKEND = rule(
    "NPU710",
    "compile-npu-backend",
    MEDIUM,
    '`torch.compile` (inductor) in a module that does not train: the backend becomes TorchAir\'s `"npu"` on the NPU '
    "(inductor there needs triton-ascend, and has no NPU code generation before torch_npu 2.6).",
    """
    torch.compile's default backend, inductor, has no NPU code generation in torch_npu 2.1.0-2.5.1; from 2.6.0
    torch_npu registers one that generates Triton code and needs triton-ascend, which torch-npu does not install.
    Every covered release registers TorchAir's graph compiler as the dynamo backend `"npu"` (the
    `torchair.get_npu_backend()` of Ascend's inference guides, imported lazily by torch_npu). So a
    `torch.compile(...)` of a module that runs a model for inference (it calls `torch.no_grad()`,
    `torch.inference_mode()` or `.eval()`) and never calls `backward()` (see NPU706/NPU707 for training), with
    no backend or `backend="inductor"` and no `mode` or `options` (which torch passes to inductor only, and to
    another backend as keyword arguments TorchAir does not take), gets a backend chosen at run time: `"npu"` where
    torch.npu is available, inductor elsewhere. With `--other-devices drop` it is `backend="npu"`. A library module
    that shows neither training nor inference is left (its callers may train), and so is a compiled
    `flex_attention`, which only inductor turns into a kernel. Medium
    confidence: TorchAir compiles the graph through Ascend IR, and a model with an operator it cannot convert fails
    at the first call; drop the call (eager) there.

    Before:
        import torch
        model = torch.compile(model)
        with torch.no_grad():
            out = model(x)
    After:
        import torch
        model = torch.compile(model, backend="npu" if hasattr(torch, "npu") and torch.npu.is_available() else "inductor")
        with torch.no_grad():
            out = model(x)
    """,
)
PROFILER = rule(
    "NPU704",
    "profiler-npu",
    HIGH,
    "`torch.profiler` profile/schedule/tensorboard_trace_handler/ProfilerActivity/ProfilerAction -> "
    "`torch_npu.profiler`, `ProfilerActivity.CUDA` -> `.NPU`.",
    """
    The Ascend profiler is `torch_npu.profiler`: it takes the same arguments as `torch.profiler.profile`, and its
    `ProfilerActivity` has `CPU` and `NPU`. Its schedule and trace handler go with it (the profiler checks for
    its own `ProfilerAction`), so all of them are rewritten together, as torch_npu's own migration tools do.
    `torch.profiler.record_function` stays. The results are read from the trace (`on_trace_ready=
    torch_npu.profiler.tensorboard_trace_handler(dir)`, MindStudio Insight): see NPU705.

    Before:
        import torch
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            model(x)
    After:
        import torch
        import torch_npu
        with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof:
            model(x)
    """,
)
PROFILER_RESULTS = rule(
    "NPU705",
    "profiler-results",
    LOW,
    "`prof.key_averages()`: torch_npu's profiler has none; TODO to read the results from its trace.",
    """
    `torch_npu.profiler.profile` (see NPU704) writes its results to disk and has no `key_averages()` or
    `events()`; `table(sort_by="cuda_time_total")` has no NPU column either. Read the results with
    `on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(dir)` and MindStudio Insight or TensorBoard.

    Before:
        import torch
        print(prof.key_averages().table(sort_by="cuda_time_total"))
    After:
        import torch
        # TODO(ascend-port): NPU705 [low] torch_npu.profiler.profile has no key_averages(): read the results from its trace ...
        print(prof.key_averages().table(sort_by="cuda_time_total"))
    """,
    follows=("NPU704",),
)

NVTX_NAMES = {
    "range_push": "range_push",
    "range_pop": "range_pop",
    "mark": "mark",
    "range_start": "range_start",
    "range_end": "range_end",
    "range": "annotate",
}
GRAPH_NAMES = {
    "CUDAGraph": "NPUGraph",
    "graph": "graph",
    "make_graphed_callables": "make_graphed_callables",
    "graph_pool_handle": "graph_pool_handle",
    "is_current_stream_capturing": "is_current_stream_capturing",
}
PROFILER_NAMES = {
    "profile",
    "schedule",
    "tensorboard_trace_handler",
    "ProfilerActivity",
    "ProfilerAction",
    "supported_activities",
}
# torch's own enum has no NPU member: only torch.profiler's, which NPU704 turns into torch_npu's, is renamed.
PROFILER_ACTIVITY = {"torch.profiler.ProfilerActivity"}
CUDA_ONLY_BACKENDS = {"tensorrt", "torch_tensorrt", "cudagraphs_inner"}
CUDA_MODES = {"max-autotune", "max-autotune-no-cudagraphs"}
CUDA_OPTION_WORDS = ("cuda", "cudagraph", "max_autotune", "triton.")


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(value := node.evaluated_value, str):
        return value
    return None


def _npu_alias(alias: cst.ImportAlias) -> cst.ImportAlias:
    """A name imported from torch.cuda as torch.npu spells it (nvtx is mstx there, bound to the old name)."""
    name = alias.name.value if isinstance(alias.name, cst.Name) else ""
    if name == "nvtx":
        return alias.with_changes(name=cst.Name("mstx"), asname=alias.asname or cst.AsName(cst.Name("nvtx")))
    if name in GRAPH_NAMES and GRAPH_NAMES[name] != name:
        return alias.with_changes(name=cst.Name(GRAPH_NAMES[name]))
    return alias


_TRAINING_STEP = re.compile(r"backward|step|zero_grad")
# What says a module runs a model for inference (NPU710): `with torch.no_grad():`, `@torch.no_grad`,
# `@torch.inference_mode()`, and `model.eval()` (a method called without arguments: not the builtin eval).
_NO_GRAD = frozenset({"no_grad", "inference_mode"})


def _says_inference(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in _NO_GRAD or isinstance(node, ast.Name) and node.id in _NO_GRAD:
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "eval"
        and not node.args
        and not node.keywords
    )


# NVTX's range_push/range_pop on a torch_npu that has mstx.range_start/range_end but no range_push/range_pop
# (before 2.7.1, and 2.8.0 / 2.9.1): the port calls these helpers, written once per module in front of their first
# use. NVTX returns the depth of the range stack from both; so do they.
RANGE_STACK = {"range_push": "_npu_range_push", "range_pop": "_npu_range_pop"}
_RANGE_STACK_SOURCE = '''\
_NPU_MSTX_RANGES = []


def _npu_range_push(message):
    """torch.cuda.nvtx.range_push on {torch_npu}.npu.mstx (written by ascend-port, rule NPU700): this torch_npu
    release has mstx.range_start/range_end but no range_push/range_pop."""
    _NPU_MSTX_RANGES.append({torch_npu}.npu.mstx.range_start(message))
    return len(_NPU_MSTX_RANGES) - 1


def _npu_range_pop():
    """torch.cuda.nvtx.range_pop on {torch_npu}.npu.mstx (written by ascend-port, rule NPU700)."""
    if not _NPU_MSTX_RANGES:
        return -1
    {torch_npu}.npu.mstx.range_end(_NPU_MSTX_RANGES.pop())
    return len(_NPU_MSTX_RANGES)
'''


def insert_range_stack(text: str, parse: Callable[[], ast.Module]) -> str:
    """``text`` with the range-stack helpers in front of the first top-level statement that calls them, unless the
    module defines one of them already (the two share their stack)."""
    helpers = list(RANGE_STACK.values())

    def block(tree: ast.Module, missing: list[str]) -> str | None:
        if len(missing) < len(helpers):
            return None
        return _RANGE_STACK_SOURCE.format(torch_npu=bound_name(tree, "torch_npu") or "torch_npu")

    return insert_definitions(text, parse, helpers, block, requires={a: helpers for a in helpers})


def _called_methods(node: cst.CSTNode) -> Iterator[str]:
    """The method names called anywhere under ``node`` (``loss.backward()`` -> ``backward``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            yield current.func.attr.value
        stack.extend(current.children)


class CompileTransformer(PortTransformer):
    """NPU700-NPU707, NPU710."""

    # The graph names are bare names from `from torch.cuda import ...`; `torch.cuda.graph`, the "cudagraphs"
    # backends and options say cuda.
    TRIGGERS = (
        r"cuda",
        r"nvtx",
        r"CUDAGraph",
        Trigger(
            r"\bgraph\b|graphed_callables|graph_pool_handle|stream_capturing",
            imported("torch.cuda"),
            also=("torch.cuda",),
        ),
        # NPU702/703's settings: the tensorrt backends and the CUDA-tuned modes and options (max-autotune)
        r"tensorrt",
        r"max[-_]autotune",
        r"profiler",
        r"ProfilerActivity",
        r"key_averages",
        Trigger(r"\.CUDA\b", also=("profiler",)),  # `ProfilerActivity.CUDA` through an alias
        # NPU706/707: torch.compile (or `from torch import compile`) in a module that trains
        Trigger(r"\bcompile\b|_dynamo", also=("backward",)),
        # NPU710: torch.compile (through any alias) in a module that does not train
        Trigger(r"\bcompile\b", imports=("torch",)),
    )
    RULES = (
        NVTX,
        CUDA_GRAPHS,
        COMPILE_BACKEND,
        COMPILE_SETTINGS,
        COMPILE_GRAPHS_TRAINING,
        COMPILE_TRAINING,
        COMPILE_INFERENCE_BACKEND,
        PROFILER,
        PROFILER_RESULTS,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.target_api(ctx.options)  # the target release's API (--torch-npu)
        self._target = npu_api.target_version(ctx.options)
        self._profiler_names = PROFILER_NAMES & self.api.profiler
        self._import_parts: set[int] = set()
        self._attr_names: set[int] = set()
        aliases = ctx.imports.aliases.values()
        # NPU705 only where torch.profiler may be in use (and so rewritten by NPU704).
        self._uses_profiler = any(t == "torch" or t.startswith("torch.profiler") for t in aliases)
        self._trains: bool | None = None  # does the module call backward() (asked at its first torch.compile)?
        self._infers: bool | None = None  # does it call no_grad(), inference_mode() or .eval() (NPU710)?

    def visit_Import(self, node: cst.Import) -> None:
        self._import_parts |= names_in(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._import_parts |= names_in(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attr_names.add(id(node.attr))

    # --- attributes: torch.cuda.nvtx.*, torch.cuda graphs, torch.profiler.* -----------------------------------

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) in self._import_parts:
            return updated
        qualified = self.ctx.imports.resolve(original) or ""
        parts = qualified.split(".")
        if qualified.startswith("torch.cuda.nvtx.") and len(parts) == 4:
            return self._nvtx(original, updated, parts[3])
        if len(parts) == 3 and qualified.startswith("torch.cuda.") and parts[2] in GRAPH_NAMES:
            return self._graph(original, updated, parts[2])
        if len(parts) == 3 and qualified.startswith("torch.profiler.") and parts[2] in self._profiler_names:
            return (
                self.fix(
                    PROFILER,
                    original,
                    build_dotted(f"torch_npu.profiler.{parts[2]}"),
                    f"{qualified} -> torch_npu.profiler.{parts[2]}",
                    torch_npu_name=True,
                )
                or updated
            )
        if qualified.rsplit(".", 1)[0] in PROFILER_ACTIVITY and original.attr.value == "CUDA":
            return (
                self.fix(
                    PROFILER,
                    original,
                    updated.with_changes(attr=cst.Name("NPU")),
                    "ProfilerActivity.CUDA -> ProfilerActivity.NPU",
                )
                or updated
            )
        return updated

    def _nvtx(self, original: cst.Attribute, updated: cst.Attribute, name: str) -> cst.BaseExpression:
        if name not in NVTX_NAMES:
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.nvtx.{name} has no torch_npu.npu.mstx counterpart: port by hand",
            )
            return updated
        new = NVTX_NAMES[name]
        if (gap := self._mstx_gap(name)) is not None:
            if new in RANGE_STACK and self._has_mstx("range_start") and self._has_mstx("range_end"):
                # The target has mstx ranges by id but no stack of them: a module-level stack of ids (finish).
                helper = RANGE_STACK[new]
                message = f"torch.cuda.nvtx.{name} -> {helper} (torch_npu.npu.mstx.range_start/range_end)"
                return self.fix(NVTX, original, cst.Name(helper), message, torch_npu_name=True) or updated
            self.todo(NVTX, original, gap)
            return updated
        if isinstance(original.value, cst.Name):
            # `nvtx.X` through `from torch.cuda import nvtx`: that import now binds mstx under the same name.
            if new == name:
                return updated
            return (
                self.fix(
                    NVTX,
                    original,
                    updated.with_changes(attr=cst.Name(new)),
                    f"torch.cuda.nvtx.{name} -> torch_npu.npu.mstx.{new}",
                )
                or updated
            )
        return (
            self.fix(
                NVTX,
                original,
                build_dotted(f"torch_npu.npu.mstx.{new}"),
                f"torch.cuda.nvtx.{name} -> torch_npu.npu.mstx.{new}",
                torch_npu_name=True,
            )
            or updated
        )

    def _has_mstx(self, name: str) -> bool:
        return npu_api.name_status(f"torch_npu.npu.mstx.{name}", self._target, strict=True) is not False

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        return insert_range_stack(text, tree)

    def _mstx_gap(self, name: str) -> str | None:
        """The TODO for an NVTX call whose mstx counterpart the target release lacks (range_push and range_pop came
        with torch_npu 2.7.1 and are missing from some later lines, annotate likewise), or None."""
        new = NVTX_NAMES[name]
        if npu_api.name_status(f"torch_npu.npu.mstx.{new}", self._target, strict=True) is not False:
            return None
        since = f" ({npu_api.availability(f'torch_npu.npu.mstx.{new}')})"
        instead = "mstx.range_start(message) and mstx.range_end(range_id)"
        if new == "annotate":
            instead += " around the block (a function: the mstx.mstx_range(message) decorator)"
        elif new in ("range_start", "range_end"):
            instead = "mstx.mark(message)"
        return (
            f"torch.cuda.nvtx.{name}: torch_npu {self._target} has no torch_npu.npu.mstx.{new}{since}; "
            f"use {instead} by hand, or target a newer torch-npu"
        )

    def _graph(self, original: cst.Attribute, updated: cst.Attribute, name: str) -> cst.BaseExpression:
        new = GRAPH_NAMES[name]
        base = original.value
        if isinstance(base, cst.Attribute) and base.attr.value == "cuda":
            assert isinstance(updated.value, cst.Attribute)
            replacement = updated.with_changes(
                value=updated.value.with_changes(attr=cst.Name("npu")), attr=cst.Name(new)
            )
        elif new != name:  # through an alias of torch.cuda, which NPU106 turns into torch.npu
            replacement = updated.with_changes(attr=cst.Name(new))
        else:
            return updated
        return (
            self.fix(CUDA_GRAPHS, original, replacement, f"torch.cuda.{name} -> torch.npu.{new} (inference only)")
            or updated
        )

    def visit_With(self, node: cst.With) -> None:
        """NPU graphs are inference only: a capture around a training step (backward, optimizer step) gets a TODO."""
        graphs = {"torch.cuda.graph", "torch.npu.graph"}
        if not any(
            isinstance(item.item, cst.Call) and self.ctx.imports.resolve(item.item.func) in graphs
            for item in node.items
        ):
            return
        if any(_TRAINING_STEP.fullmatch(name) for name in _called_methods(node.body)):
            self.todo(
                CUDA_GRAPHS,
                node,
                "this graph captures a training step (backward or optimizer step): torch_npu's NPU graphs support "
                "inference only; capture the forward pass for inference, or run the training step eagerly",
            )

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if (
            original.value == "CUDAGraph"
            and id(original) not in self._import_parts
            and id(original) not in self._attr_names
            and self.ctx.imports.resolve(original) == "torch.cuda.CUDAGraph"
        ):
            return (
                self.fix(
                    CUDA_GRAPHS,
                    original,
                    updated.with_changes(value="NPUGraph"),
                    "torch.cuda.CUDAGraph -> torch.npu.NPUGraph (inference only)",
                )
                or updated
            )
        return updated

    # --- imports ------------------------------------------------------------------------------------------------

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        module = dotted(original.module) if original.module is not None and not original.relative else None
        if module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        if module == "torch.cuda":
            return self._from_torch_cuda(original, updated)
        if module == "torch.cuda.nvtx":
            names = ", ".join(a.name.value for a in updated.names if isinstance(a.name, cst.Name))
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.nvtx.{{{names}}}: import mstx instead (from torch_npu.npu import mstx) and call "
                "mstx.range_push/range_pop/mark/annotate",
            )
        if module == "torch.profiler":
            imported = [a.name.value for a in updated.names if isinstance(a.name, cst.Name)]
            if imported and all(n in self._profiler_names for n in imported):
                return (
                    self.fix(
                        PROFILER,
                        original,
                        updated.with_changes(module=build_dotted("torch_npu.profiler")),
                        "from torch.profiler -> from torch_npu.profiler",
                        torch_npu_name=True,
                    )
                    or updated
                )
        return updated

    def _from_torch_cuda(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        assert not isinstance(updated.names, cst.ImportStar)
        imported = [a.name.value for a in updated.names if isinstance(a.name, cst.Name)]
        if not any(n in GRAPH_NAMES or n == "nvtx" for n in imported):
            return updated  # NPU106/NPU107 (device.py)
        missing = [n for n in imported if n not in GRAPH_NAMES and n != "nvtx" and not self.api.has(n)]
        if missing:
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{{{', '.join(missing)}}} has no torch.npu counterpart (torch_npu "
                f"{self.api.version}): port by hand",
            )
            return updated
        names = [_npu_alias(alias) for alias in updated.names]
        rule_ = CUDA_GRAPHS if any(n in GRAPH_NAMES for n in imported) else NVTX
        return (
            self.fix(
                rule_,
                original,
                updated.with_changes(module=build_dotted("torch.npu"), names=names),
                "from torch.cuda import ... -> from torch.npu import ...",
            )
            or updated
        )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(updated.body) == 1 and isinstance(small := updated.body[0], cst.ImportFrom):
            return self._split_profiler_import(original, updated, small)
        if len(updated.body) != 1 or not isinstance(small := updated.body[0], cst.Import):
            return updated
        if len(small.names) != 1 or small.names[0].asname is None:
            return updated
        alias = small.names[0]
        if dotted(alias.name) != "torch.cuda.nvtx":
            return updated
        # `import torch.cuda.nvtx as nv` -> `from torch_npu.npu import mstx as nv` (mstx is a class, not a module).
        new = cst.ImportFrom(module=build_dotted("torch_npu.npu"), names=[alias.with_changes(name=cst.Name("mstx"))])
        return (
            self.fix(
                NVTX,
                original,
                updated.with_changes(body=[new]),
                "import torch.cuda.nvtx -> from torch_npu.npu import mstx",
                torch_npu_name=True,
            )
            or updated
        )

    def _split_profiler_import(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, small: cst.ImportFrom
    ):
        """``from torch.profiler import profile, record_function`` -> one import from torch_npu.profiler for the
        names it has and one from torch.profiler for the rest (the names must come from the same profiler)."""
        if (
            small.relative
            or small.module is None
            or dotted(small.module) != "torch.profiler"
            or isinstance(small.names, cst.ImportStar)
        ):
            return updated
        npu = [a for a in small.names if isinstance(a.name, cst.Name) and a.name.value in self._profiler_names]
        rest = [a for a in small.names if a not in npu]
        if not npu or not rest:
            return updated  # all of them: leave_ImportFrom renamed the module; none: nothing to do

        def line(module: str, aliases: list[cst.ImportAlias], **changes) -> cst.SimpleStatementLine:
            aliases = [*aliases[:-1], aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            new = small.with_changes(module=build_dotted(module), names=aliases, lpar=None, rpar=None)
            return updated.with_changes(body=[new], **changes)

        split = [line("torch_npu.profiler", npu), line("torch.profiler", rest, leading_lines=[])]
        if (
            self.fix(
                PROFILER, original, split, "from torch.profiler -> torch_npu.profiler (split)", torch_npu_name=True
            )
            is None
        ):
            return updated
        # The statement becomes two: its pending TODO comments (of any rule) go above the first.
        split[0] = self.ctx.defer_todos_to(split[0])
        return cst.FlattenSentinel(split)

    # --- calls: nvtx.range(fmt, *args), torch.compile, key_averages ------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func) or ""
        if qualified == "torch.cuda.nvtx.range" and len(original.args) > 1 and self._mstx_gap("range") is None:
            return self._nvtx_range_format(original, updated)
        if qualified in ("torch.compile", "torch._dynamo.optimize"):
            return self._compile(original, updated, qualified)
        func = original.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("key_averages", "events")
            and self._uses_profiler
            and self.enabled(PROFILER)
            and not original.args
            and qualified == ""
        ):
            self.todo(
                PROFILER_RESULTS,
                original,
                f"torch_npu.profiler.profile has no {func.attr.value}(): read the results from its trace "
                "(on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(dir), MindStudio Insight)",
            )
        return updated

    def _nvtx_range_format(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``range(msg, *args, **kwargs)`` formats ``msg`` with the rest; ``annotate`` takes one message."""
        message, *rest = updated.args
        if message.keyword is not None or message.star:
            return updated
        template = message.value
        if not isinstance(template, (cst.SimpleString, cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            template = template.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        rest = [*rest[:-1], rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        formatted = cst.Call(func=cst.Attribute(value=template, attr=cst.Name("format")), args=rest)
        single = message.with_changes(value=formatted, comma=cst.MaybeSentinel.DEFAULT)
        replacement = updated.with_changes(args=[single])
        return self.fix(NVTX, original, replacement, "nvtx.range(msg, *args) -> annotate(msg.format(*args))") or updated

    def _compile(self, original: cst.Call, updated: cst.Call, qualified: str) -> cst.BaseExpression:
        args: list[cst.Arg | None] = list(updated.args)
        keywords = {arg.keyword.value for arg in original.args if arg.keyword is not None}
        if self._module_trains() and "disable" not in keywords:
            self.todo(
                COMPILE_TRAINING,
                original,
                f"{qualified} of code this module trains (it calls backward()): on the NPU, train eagerly first "
                "(drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or "
                "TorchAir (backend=torchair.get_npu_backend()) and compare the losses",
            )
        for i, arg in enumerate(original.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "backend" or (keyword is None and i == 0 and qualified == "torch._dynamo.optimize"):
                args[i] = self._compile_backend(original, arg, updated.args[i])
            elif keyword == "mode" and _string(arg.value) == "reduce-overhead" and self._module_trains():
                args[i] = self._graphs_off_on_npu(original, updated.args[i])
            else:
                self._compile_setting(original, arg, keyword)
        if qualified == "torch.compile" and not self._module_trains() and self._module_infers():
            args = self._npu_backend(original, args)
        if args == list(updated.args):
            return updated
        kept = [arg for arg in args if arg is not None]
        if kept and args[-1] is None:  # the last argument went: its predecessor's comma goes with it
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=kept)

    def _npu_backend(self, original: cst.Call, args: list[cst.Arg | None]) -> list[cst.Arg | None]:
        """NPU710: inductor (no backend, or ``backend="inductor"``) of an inference ``torch.compile`` -> TorchAir's
        ``"npu"`` backend on the NPU, inductor elsewhere. Left: another backend, a ``mode``/``options`` (inductor's
        own), arguments by position after the model, ``**kwargs``."""
        keywords = {arg.keyword.value: i for i, arg in enumerate(original.args) if arg.keyword is not None}
        positional = [arg for arg in original.args if arg.keyword is None]
        if len(positional) > 1 or any(arg.star for arg in original.args):
            return args
        if positional and (self.ctx.imports.resolve(positional[0].value) or "").endswith("flex_attention"):
            return args  # a higher-order op that only inductor compiles into a kernel
        mode = original.args[keywords["mode"]].value if "mode" in keywords else None
        if "options" in keywords or (mode is not None and _string(mode) != "default"):
            return args
        if "backend" in keywords and _string(original.args[keywords["backend"]].value) != "inductor":
            return args
        torch = self.ctx.torch_name()
        if self.ctx.options.other_devices == "keep":
            value = f'"npu" if hasattr({torch}, "npu") and {torch}.npu.is_available() else "inductor"'
            message = 'inductor -> backend "npu" (TorchAir) on the NPU, inductor elsewhere'
        else:
            value, message = '"npu"', 'inductor -> backend "npu" (TorchAir)'
        if not self.fix(COMPILE_INFERENCE_BACKEND, original, True, message, needs_torch_npu=False):
            return args
        choice = cst.parse_expression(value)
        if "backend" in keywords:
            i = keywords["backend"]
            current = args[i]
            assert current is not None
            return [*args[:i], current.with_changes(value=choice), *args[i + 1 :]]
        backend = cst.Arg(
            keyword=cst.Name("backend"),
            value=choice,
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        kept = [arg for arg in args if arg is not None]
        if not kept:
            return [backend]
        last = kept[-1]
        if isinstance(last.comma, cst.Comma):  # a trailing comma: the new argument gets its own line, and the comma
            kept[-1] = last.with_changes(comma=cst.Comma(whitespace_after=original.whitespace_before_args))
            backend = backend.with_changes(comma=last.comma)
        else:
            kept[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return [*kept, backend]

    def _module_infers(self) -> bool:
        """Does the module run a model for inference (``torch.no_grad``, ``torch.inference_mode``, ``.eval()``)? A
        module that shows neither training nor inference is a library's, whose callers may train (NPU710 leaves
        it)."""
        if self._infers is None:
            tree = self.ctx.module()
            self._infers = tree is not None and any(_says_inference(node) for node in ast.walk(tree))
        return self._infers

    def _module_trains(self) -> bool:
        """Does the module call ``backward()`` (``loss.backward()``, ``accelerator.backward(loss)``)? Then what it
        compiles is trained (NPU706, NPU707)."""
        if self._trains is None:
            tree = self.ctx.module()
            self._trains = tree is not None and any(
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                for node in ast.walk(tree)
            )
        return self._trains

    def _graphs_off_on_npu(self, original: cst.Call, updated_arg: cst.Arg) -> cst.Arg | None:
        """``mode="reduce-overhead"`` of a compiled model that is trained: NPU graphs capture no backward pass, so
        the NPU gets the default mode; the other devices keep theirs (``--other-devices drop``: no ``mode=``)."""
        if self.ctx.options.other_devices != "keep":
            fixed = self.fix(
                COMPILE_GRAPHS_TRAINING,
                original,
                True,
                'mode="reduce-overhead" removed: NPU graphs capture no backward pass',
                needs_torch_npu=False,
            )
            return None if fixed else updated_arg
        torch = self.ctx.torch_name()
        choice = cst.parse_expression(
            f'"default" if hasattr({torch}, "npu") and {torch}.npu.is_available() else {code_of(updated_arg.value)}'
        )
        return (
            self.fix(
                COMPILE_GRAPHS_TRAINING,
                original,
                updated_arg.with_changes(value=choice),
                'mode="reduce-overhead" -> "default" on the NPU: NPU graphs capture no backward pass',
                needs_torch_npu=False,
            )
            or updated_arg
        )

    def _compile_backend(self, original: cst.Call, arg: cst.Arg, updated_arg: cst.Arg) -> cst.Arg:
        """``updated_arg`` (the backend argument), renamed when it is cudagraphs; a TODO when the backend is
        NVIDIA-only."""
        value = _string(arg.value)
        if value == "cudagraphs" and isinstance(arg.value, cst.SimpleString):
            new_value = arg.value.with_changes(value=arg.value.value.replace("cudagraphs", "npugraphs"))
            fixed = self.fix(
                COMPILE_BACKEND,
                original,
                updated_arg.with_changes(value=new_value),
                'backend="cudagraphs" -> "npugraphs"',
            )
            return fixed if fixed is not None else updated_arg
        if value in CUDA_ONLY_BACKENDS:
            self.todo(
                COMPILE_SETTINGS,
                original,
                f'torch.compile backend="{value}" is NVIDIA-only: on NPU use the default inductor, '
                'backend="npugraph_ex" or TorchAir (torchair.get_npu_backend()) for inference',
            )
        return updated_arg

    def _compile_setting(self, original: cst.Call, arg: cst.Arg, keyword: str | None) -> None:
        """A TODO for a mode or inductor options of ``torch.compile`` that only make sense on CUDA."""
        value = _string(arg.value)
        if keyword == "mode" and value in CUDA_MODES:
            self.todo(
                COMPILE_SETTINGS,
                original,
                f'torch.compile mode="{value}" tunes inductor\'s CUDA templates and CUDA graphs: on NPU '
                'start from the default mode (or backend="npugraphs" for static-shape inference)',
            )
        elif keyword == "options" and isinstance(arg.value, cst.Dict):
            keys = [
                k
                for e in arg.value.elements
                if isinstance(e, cst.DictElement) and (k := _string(e.key)) and any(w in k for w in CUDA_OPTION_WORDS)
            ]
            if keys:
                self.todo(
                    COMPILE_SETTINGS,
                    original,
                    f"torch.compile options {', '.join(keys)} configure inductor's CUDA code generation: "
                    "review them for the NPU inductor",
                )
