"""NPU122: the CUDA islands of a project that supports the NPU already, made device-neutral.

In such a project (python/device_model.supports_npu: DeepSpeed, accelerate, transformers) the rules report its CUDA
code and change nothing: its dispatches, tables and settings name CUDA on purpose. What the device model keeps is
that code; a CUDA call outside it (`torch.cuda.synchronize()` with no test around it) is an island, which breaks on
the NPU. A rewrite to the NPU would break it on CUDA; a device-neutral one runs on both: through the project's own
accelerator where the module has it (DeepSpeed's `get_accelerator()`; for the device a call places on,
accelerate's state or a device helper of the project's: rules/island_routes.py), else through `torch.accelerator`
where the target's torch has the name. Anything else (streams, `.cuda(i)`, a device string outside DeepSpeed and
accelerate) keeps today's report.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from ascend_port.core import library_support, npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import Definitions
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import build_dotted
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.device.methods import user_cuda_classes
from ascend_port.rules.island_routes import accelerate_device, imported_helpers, own_helpers

DEVICE_NEUTRAL_ISLAND = rule(
    "NPU122",
    "device-neutral-island",
    Confidence.MEDIUM,
    "In a project that supports the NPU already, a CUDA call outside its device dispatch -> its own accelerator "
    "(DeepSpeed's `get_accelerator()`, accelerate's device) or `torch.accelerator`, which CUDA runs as before.",
    """
    A project that runs on the NPU already keeps its CUDA code (the other rules only report it), but a CUDA call
    with no device dispatch around it still fails on an NPU. Such a call becomes device-neutral, so that CUDA runs
    it as before and the NPU runs it too: where the module imports DeepSpeed's `get_accelerator`,
    `torch.cuda.X(...)` becomes `get_accelerator().X(...)` (`synchronize`, `set_device`, `current_device`,
    `device_count`, `empty_cache`, `manual_seed`, `manual_seed_all` and the memory statistics, each a method of
    DeepSpeed's abstract accelerator with torch.cuda's positional arguments), `x.cuda()` becomes
    `x.to(get_accelerator().current_device_name())` and a device string given as a device (`device=`,
    `torch.device(...)`, `.to(...)`) becomes `get_accelerator().device_name()` (`"cuda:1"`, `f"cuda:{i}"`:
    `device_name(1)`, `device_name(i)`, which CUDA's accelerator spells the same); where the module has accelerate's
    device (an `Accelerator(...)` bound in reach: `accelerator.device`; else the `PartialState` or
    `AcceleratorState` it imports: `PartialState().device`, the device accelerate chose, the NPU where torch_npu is
    installed), or else a device helper of the project's that the module imports or defines above (a function with
    no required argument whose every return spells out a device, CUDA's and the NPU's among them: `get_device()`),
    `x.cuda()` becomes `x.to(<that device>)` and the device string `"cuda"` that device; elsewhere,
    where the target's torch has them, `torch.accelerator.synchronize()`, `device_count()` (torch 2.6),
    `current_device_index()`, `set_device_index(i)` (2.7), `empty_cache()` and the memory statistics (2.9), and
    `x.to(torch.accelerator.current_accelerator())` for `x.cuda()`. Left as reported: code in a dispatch or under a
    CUDA test, in a function named or decorated for CUDA or GPUs (`require_multi_gpu`), on a line marked
    `# ignore-cuda` (DeepSpeed's mark for CUDA on purpose), after a CUDA guard that returns (`if not
    torch.cuda.is_available(): return False`), calls with keyword arguments (torch.accelerator's are
    positional-only), `x.cuda(i)` (`i` may be a device), a module with a `cuda()` method of its own, streams,
    device strings without DeepSpeed (but `"cuda"` with accelerate's device or a device helper). Medium: `.cuda()`
    is taken for torch's (as NPU101 does), and a library's users need the target's torch for torch.accelerator.

    Before:
        import torch

        def step(model, batch):
            loss = model(batch.cuda())
            torch.cuda.synchronize()
            return loss
    After:
        import torch

        def step(model, batch):
            loss = model(batch.to(torch.accelerator.current_accelerator()))
            torch.accelerator.synchronize()
            return loss
    Stays (a dispatch: CUDA's branch on purpose):
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
    """,
    npu_aware=True,
)

# torch.cuda.<name>(...) -> get_accelerator().<name>(...): methods of DeepSpeed's abstract accelerator that take
# torch.cuda's positional arguments (deepspeed/accelerator/abstract_accelerator.py, 0.16.4 to 0.19.8).
# The memory statistics both spellings have: DeepSpeed's accelerator, and torch.accelerator from torch 2.9.
_MEMORY_STATS = (
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
)
_DEEPSPEED_METHODS = frozenset(
    {
        "synchronize",
        "set_device",
        "current_device",
        "device_count",
        "empty_cache",
        "manual_seed",
        "manual_seed_all",
        *_MEMORY_STATS,
    }
)
_GET_ACCELERATOR = "deepspeed.accelerator.get_accelerator"

# torch.cuda.<name> -> torch.accelerator.<name> and the first torch that has it (torch 2.6 added the module; 2.7
# the *_index names, where 2.6 spelled them *_idx; 2.9 the memory functions).
_TORCH_ACCELERATOR: dict[str, tuple[str, tuple[int, ...]]] = {
    "synchronize": ("synchronize", (2, 6)),
    "device_count": ("device_count", (2, 6)),
    "current_device": ("current_device_index", (2, 7)),
    "set_device": ("set_device_index", (2, 7)),
    **{name: (name, (2, 9)) for name in ("empty_cache", *_MEMORY_STATS)},
}
_CURRENT_ACCELERATOR = (2, 6)  # torch.accelerator.current_accelerator()

# A function that serves CUDA or GPUs alone by its name or decorators (`require_multi_gpu`, `@require_torch_gpu`,
# `@skipIf(not torch.cuda.is_available())`): its CUDA calls are questions about CUDA, not islands.
_FOR_CUDA = re.compile(r"cuda|gpu", re.IGNORECASE)
_IGNORE_CUDA = "ignore-cuda"  # DeepSpeed's mark (its check-torchcuda hook): this line uses CUDA on purpose


def _cuda_ifs(facts: ModuleFacts) -> list[tuple[int, int]]:
    """The lines of the `if` statements whose test names CUDA or GPUs (accelerate's `distributed_type ==
    DistributedType.MULTI_GPU`, beside its MULTI_NPU): a dispatch of the project's own, kept whole. (The device model
    keeps those that name a device: GPU names none.)"""
    return [
        (node.lineno, node.end_lineno or node.lineno)
        for node in facts.statements(ast.If)
        if _FOR_CUDA.search(ast.unparse(node.test))
    ]


def _guarded_for_cuda(function: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> bool:
    """Does ``function`` leave early, before ``line``, where CUDA is not there (`if not torch.cuda.is_available():
    return False`, transformers' SDPA probes)? What follows is CUDA's alone."""
    return any(
        isinstance(statement, ast.If)
        and statement.end_lineno is not None
        and statement.end_lineno < line
        and not statement.orelse
        and isinstance(statement.body[-1], (ast.Return, ast.Raise))
        and _FOR_CUDA.search(ast.unparse(statement.test)) is not None
        for statement in function.body
    )


def _definitions(facts: ModuleFacts) -> Definitions | None:
    """The module's functions (every statement a rule ports is in its head)."""
    return Definitions(facts.head) if facts.head is not None else None


@dataclass(frozen=True)
class _Plan:
    # the new function called, or for `x.cuda()` the device `x.to()` is given; None: the call's device strings change
    new: cst.BaseExpression | None
    message: str
    method: bool = False  # `x.cuda()`
    devices: tuple[tuple[int, cst.BaseExpression], ...] = ()  # arguments that are device strings: (index, new)


def _device_string(value: cst.BaseExpression, accelerator: str) -> cst.BaseExpression | None:
    """DeepSpeed's spelling of a CUDA device string: `"cuda"` -> `get_accelerator().device_name()`, `"cuda:1"` and
    `f"cuda:{i}"` -> `get_accelerator().device_name(1)`, `...(i)` (which returns `"cuda:1"`, `f"cuda:{i}"` on CUDA)."""
    index: cst.BaseExpression | None = None
    if isinstance(value, cst.SimpleString) and isinstance(text := value.evaluated_value, str):
        if text != "cuda" and not re.fullmatch(r"cuda:\d+", text):
            return None
        index = cst.Integer(text[5:]) if ":" in text else None
    elif isinstance(value, cst.FormattedString) and len(value.parts) == 2:
        head, part = value.parts
        if not (
            isinstance(head, cst.FormattedStringText)
            and head.value == "cuda:"
            and isinstance(part, cst.FormattedStringExpression)
            and part.conversion is None
            and part.format_spec is None
        ):
            return None
        index = part.expression
    else:
        return None
    return cst.Call(
        cst.Attribute(cst.Call(cst.Name(accelerator)), cst.Name("device_name")),
        [cst.Arg(index)] if index is not None else [],
    )


def _plain_cuda(value: cst.BaseExpression, device: str | None) -> cst.BaseExpression | None:
    """``device`` (code) for the string `"cuda"`, the current CUDA device; None for anything else."""
    if device is None or not (isinstance(value, cst.SimpleString) and value.evaluated_value == "cuda"):
        return None
    return cst.parse_expression(device)


class IslandTransformer(PortTransformer):
    """NPU122: runs before the device rules, which leave the calls it claims (and their report) alone."""

    TRIGGERS = (r"\bcuda\.\w+\(", r"\.cuda\(", r"['\"]cuda\b")  # (the last: device strings, DeepSpeed's)
    RULES = (DEVICE_NEUTRAL_ISLAND,)
    DEVICE_NEUTRAL = frozenset({DEVICE_NEUTRAL_ISLAND})

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._planned: dict[int, _Plan] = {}  # by the id of the original call

    def visit_Call(self, node: cst.Call) -> None:
        # (the option first: asking reports_only() reads the device model, which most modules' calls never need)
        if not self.ctx.options.npu_aware or not self.enabled(DEVICE_NEUTRAL_ISLAND) or not self.ctx.reports_only():
            return
        plan = self._torch_cuda_call(node) or self._cuda_method(node) or self._device_arguments(node)
        if plan is None or self.ctx.keeps(node) or self.ctx.suppressed(DEVICE_NEUTRAL_ISLAND, node):
            return
        if not self._island(node):
            return
        self._planned[id(node)] = plan
        # The device rules' report of the call (NPU106 on its `torch.cuda.X`, NPU101 on `.cuda()`, NPU103 on its
        # device strings) would say it stays CUDA's: it is ported here.
        if plan.devices:
            for i, _ in plan.devices:
                self.ctx.claim(node.args[i].value, by=DEVICE_NEUTRAL_ISLAND)
            return
        self.ctx.claim(node, by=DEVICE_NEUTRAL_ISLAND)
        self.ctx.claim(node.func, by=DEVICE_NEUTRAL_ISLAND)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        plan = self._planned.pop(id(original), None)
        if plan is None:
            return updated
        if plan.new is None:  # device strings
            args = list(updated.args)
            for i, device in plan.devices:
                args[i] = args[i].with_changes(value=device)
            replacement = updated.with_changes(args=args)
        elif plan.method:  # x.cuda(...) -> x.to(<device>, ...)
            func = cst.ensure_type(updated.func, cst.Attribute).with_changes(attr=cst.Name("to"))
            replacement = updated.with_changes(func=func, args=[cst.Arg(plan.new), *updated.args])
        else:
            replacement = updated.with_changes(func=plan.new)
        return self.fix(DEVICE_NEUTRAL_ISLAND, original, replacement, plan.message) or updated

    def _torch_cuda_call(self, node: cst.Call) -> _Plan | None:
        """`<torch>.cuda.<name>(positional...)` with a device-neutral spelling in this module."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)):
            return None
        qualified = self.ctx.imports.resolve(func)
        if qualified is None or qualified.count(".") != 2 or not qualified.startswith("torch.cuda."):
            return None
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        name = qualified.rsplit(".", 1)[1]
        accelerator = self.ctx.imports.local_name_for(_GET_ACCELERATOR)
        if accelerator is not None and name in _DEEPSPEED_METHODS:
            new = cst.Attribute(cst.Call(cst.Name(accelerator)), cst.Name(name))
            return _Plan(new, f"torch.cuda.{name} -> {accelerator}().{name}", method=False)
        torch = self.ctx.imports.local_name_for("torch")
        if name not in _TORCH_ACCELERATOR or torch is None or not self._target_has(_TORCH_ACCELERATOR[name][1]):
            return None
        path = f"{torch}.accelerator.{_TORCH_ACCELERATOR[name][0]}"
        return _Plan(build_dotted(path), f"torch.cuda.{name} -> {path}", method=False)

    def _cuda_method(self, node: cst.Call) -> _Plan | None:
        """`x.cuda()` (or with `non_blocking=`) -> `x.to(<the current accelerator>)`. Not `x.cuda(i)`: `i` may be an
        index, a device or a string, and no one spelling of the device takes all three."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda") or self.ctx.imports.resolve(func):
            return None
        if any(arg.keyword is None or arg.keyword.value != "non_blocking" for arg in node.args):
            return None
        if self.ctx.fact(user_cuda_classes)[0]:
            return None  # a class of the module has a cuda() of its own, which .to() would not reach
        accelerator = self.ctx.imports.local_name_for(_GET_ACCELERATOR)
        torch = self.ctx.imports.local_name_for("torch")
        if accelerator is not None:
            code = f"{accelerator}().current_device_name()"
        elif (device := self._project_device(node)) is not None:
            code = device
        elif torch is not None and self._target_has(_CURRENT_ACCELERATOR):
            code = f"{torch}.accelerator.current_accelerator()"
        else:
            return None
        return _Plan(cst.parse_expression(code), f".cuda() -> .to({code})", method=True)

    def _device_arguments(self, node: cst.Call) -> _Plan | None:
        """In a module with DeepSpeed's `get_accelerator`: the CUDA device strings a call is given as a device (its
        `device=`, the device of `torch.device(...)` and of `.to(...)`); in a module with accelerate's state, the
        string `"cuda"` among them."""
        accelerator = self.ctx.imports.local_name_for(_GET_ACCELERATOR)
        project_device = None if accelerator is not None else self._project_device(node)
        if accelerator is None and project_device is None:
            return None
        func = node.func
        device_call = self.ctx.imports.resolve(func) == "torch.device"
        first = device_call or (
            isinstance(func, cst.Attribute) and func.attr.value == "to" and self.ctx.imports.resolve(func) is None
        )
        if project_device is not None and device_call and len(node.args) > 1:
            return None  # `torch.device("cuda", i)`: the project's device may be a torch.device, which takes no index
        devices: list[tuple[int, cst.BaseExpression]] = []
        for i, arg in enumerate(node.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "device" or (i == 0 and first and keyword is None and not arg.star):
                if accelerator is not None:
                    device = _device_string(arg.value, accelerator)
                else:  # (`"cuda"` alone: the project's device has no index to give it)
                    device = _plain_cuda(arg.value, project_device)
                if device is not None:
                    devices.append((i, device))
        if not devices:
            return None
        code = cst.Module([]).code_for_node
        was = ", ".join(code(node.args[i].value) for i, _ in devices)
        becomes = ", ".join(code(device) for _, device in devices)
        return _Plan(None, f"device {was} -> {becomes}", devices=tuple(devices))

    def _project_device(self, node: cst.Call) -> str | None:
        """The code of the device the project's own abstraction chose, where the module has one (accelerate's
        state, else a device helper of the project's that the module imports or defines above: rules/island_routes.py),
        for a call that places something on CUDA's device."""
        line = self.ctx.line_of(node)
        if (device := accelerate_device(self.ctx.facts(), line)) is not None:
            return device
        imported = imported_helpers(self.ctx.facts(), self.ctx.options.device_helpers)
        own = [name for name, defined in self.ctx.fact(own_helpers) if defined < line]
        found = imported or own
        return f"{found[0]}()" if found else None

    def _target_has(self, since: tuple[int, ...]) -> bool:
        """Does the target release's torch have what came with torch ``since`` (no target known: the newest), and
        every torch the project's requirements allow (a library whose CUDA users run torch 2.2 keeps torch.cuda)?"""
        torch_version = npu_api.target_torch(self.ctx.options)
        floor = self.ctx.options.torch_floor
        if floor is not None and not library_support.at_least(floor, since):
            return False
        return not torch_version or torch_version >= since

    def _island(self, node: cst.Call) -> bool:
        """Is the call outside what serves CUDA alone: a line marked `# ignore-cuda`, an `if` on CUDA or GPUs, a
        function named or decorated for them? (What the device model keeps, its dispatches above all, was asked
        before.)"""
        line = self.ctx.line_of(node)
        if line in (self.ctx.facts().lines_with(_IGNORE_CUDA) or ()):
            return False
        if any(first <= line <= last for first, last in self.ctx.fact(_cuda_ifs)):
            return False
        definitions = self.ctx.fact(_definitions)
        if definitions is None:
            return False
        return not any(
            _FOR_CUDA.search(function.name)
            or any(_FOR_CUDA.search(ast.unparse(d)) for d in function.decorator_list)
            or _guarded_for_cuda(function, line)
            for function, _ in definitions.around(line)
        )
