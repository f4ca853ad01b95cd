"""NPU708: torch.optim's `fused=True` where the target torch-npu has no fused kernel for the optimizer.

`torch.optim.Adam/AdamW/SGD(fused=True)` pass torch's device check on the NPU (torch lists the PrivateUse1 backend
among its fused devices) and call `torch._fused_adam_` / `_fused_adamw_` / `_fused_sgd_` at the first step, which
fail there unless libtorch_npu registers the kernel. Which releases do was read from each wheel's
`torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of, finish_args, literal
from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.loss_scaling import SCALER

FUSED_OPTIMIZER = rule(
    "NPU708",
    "optimizer-fused-kernel",
    Confidence.MEDIUM,
    "`torch.optim.Adam/SGD(fused=True)` where the target torch-npu has no `_fused_adam_`/`_fused_sgd_` kernel: "
    "torch picks foreach or the loop on the NPU instead.",
    """
    torch's fused optimizers call one kernel per step: `_fused_adamw_` for `AdamW(fused=True)`, `_fused_adam_` for
    `Adam`, `_fused_sgd_` for `SGD`. torch accepts `fused=True` for NPU parameters (the PrivateUse1 backend is one
    of its fused devices), and the step then fails unless torch_npu registers the kernel. `_fused_adamw_` is in
    every covered release (2.1.0 to 2.14.0), so `AdamW(fused=True)` stays (its `lr` must be a float: no release
    has `_fused_adamw_.tensor_lr`). `_fused_adam_` and `_fused_sgd_` are in 2.7.1, 2.9.0 and 2.10.0 and later,
    and missing from 2.1.0-2.6.0, 2.8.0 and 2.9.1: for such a target (`--torch-npu`), `fused=True` of `Adam` and
    `SGD` becomes `None` on the NPU, where torch then picks its foreach kernels (which torch_npu enables on Atlas
    A2 and later) or the per-parameter loop (the same update, up to rounding). In a project that keeps its other devices
    (the default) the value is chosen at run time and the other devices keep `True`; with `--other-devices drop`
    the argument is removed. A `fused=` that is not a literal gets a TODO. The newest release (the default target)
    has all three kernels: there the calls stay as they are. The example is ported with `--torch-npu 2.8.0`.

    Before:
        import torch
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    After:
        import torch
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=None if hasattr(torch, "npu") and torch.npu.is_available() else True)
    """,
)

# The optimizer (as torch.optim spells it) -> the kernel its fused=True calls, for those whose kernel some covered
# torch-npu releases lack (AdamW's _fused_adamw_ is in all of them).
FUSED_KERNELS = {
    "torch.optim.Adam": "_fused_adam_",
    "torch.optim.adam.Adam": "_fused_adam_",
    "torch.optim.SGD": "_fused_sgd_",
    "torch.optim.sgd.SGD": "_fused_sgd_",
}
# The covered releases whose libtorch_npu registers neither _fused_adam_ nor _fused_sgd_ (both came together).
WITHOUT_FUSED_ADAM_SGD = frozenset(
    {
        "2.1.0.post17",
        "2.2.0.post2",
        "2.3.1.post6",
        "2.4.0.post4",
        "2.5.1.post1",
        "2.6.0.post5",
        "2.8.0.post5",
        "2.9.1",
    }
)


class FusedOptimizerTransformer(PortTransformer):
    """NPU708."""

    TRIGGERS = (Trigger(r"\bfused\b", also=("optim",)),)
    RULES = (FUSED_OPTIMIZER,)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._target = npu_api.target_version(ctx.options)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        optimizer = self.ctx.imports.resolve(original.func) or ""
        if optimizer not in FUSED_KERNELS or self._target not in WITHOUT_FUSED_ADAM_SGD:
            return updated
        index = next((i for i, a in enumerate(original.args) if a.keyword and a.keyword.value == "fused"), None)
        if index is None:
            return updated
        value = original.args[index].value
        kernel = FUSED_KERNELS[optimizer]
        if (isinstance(value, cst.Name) and value.value in ("False", "None")) or ".npu." in code_of(value):
            return updated  # no kernel needed, or a value that asks for the NPU already (this rule's own)
        if not (isinstance(value, cst.Name) and value.value == "True"):
            self.todo(
                FUSED_OPTIMIZER,
                original,
                f"{optimizer}(fused={code_of(value)}): torch_npu {self._target} has no {kernel} kernel, so a true "
                "value fails at the first step on the NPU: pass fused=None there (torch picks foreach)",
            )
            return updated
        message = f"{optimizer}(fused=True): torch_npu {self._target} has no {kernel} kernel"
        args = list(updated.args)
        if self.ctx.options.other_devices != "keep":
            if not self.fix(FUSED_OPTIMIZER, original, True, f"{message}: fused=True removed", needs_torch_npu=False):
                return updated
            del args[index]
            if args and index == len(args):  # the last argument went: its predecessor's comma goes with it
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=args)
        torch = self.ctx.torch_name()
        choice = cst.parse_expression(f'None if hasattr({torch}, "npu") and {torch}.npu.is_available() else True')
        args[index] = args[index].with_changes(value=choice)
        return (
            self.fix(
                FUSED_OPTIMIZER,
                original,
                updated.with_changes(args=args),
                f"{message}: fused=None on the NPU (foreach or the loop)",
                needs_torch_npu=False,
            )
            or updated
        )


FUSED_BY_DEFAULT = rule(
    "NPU709",
    "optimizer-fused-on-npu",
    Confidence.MEDIUM,
    "`torch.optim.AdamW/Adam/SGD(...)` without `fused`/`foreach`: `fused=True` on the NPU, where the target "
    "torch-npu has the kernel (one kernel per step instead of foreach's launches per op).",
    """
    torch's optimizers take `foreach` on the NPU where torch_npu enables it (Atlas A2 and later, CANN 8.0 or later):
    a few launches per operation of the update, each over every parameter. `fused=True` does the whole step in one
    kernel per device and dtype, `_fused_adamw_` / `_fused_adam_` / `_fused_sgd_`, which libtorch_npu registers:
    `_fused_adamw_` in every covered release, `_fused_adam_` and `_fused_sgd_` in 2.7.1, 2.9.0 and 2.10.0 and later
    (the tables of optimizer-fused-kernel). They are torch's own optimizers: the same update (up to rounding), the
    same `state_dict`, `zero_grad(set_to_none=True)` and any dtype. torch_npu's `NpuFusedAdamW/Adam/SGD` are not
    used: they refuse `zero_grad(set_to_none=True)` and bfloat16 parameters, and silently stop updating a
    parameter whose gradient was set to None (`model.zero_grad()`) or that was re-allocated after the first step
    (torch_npu/optim/npu_fused_optim_base.py).

    Changed only where nothing else could differ: no `fused`, `foreach`, `differentiable` or `**`-arguments other
    than a dict the same function builds from literal keys; `amsgrad`, `maximize` and `capturable` absent or a
    literal False (the NPU kernels' support of them is not known); an `lr` that is no tensor (no release has
    `_fused_adamw_.tensor_lr`); a target whose torch is 2.4 or later (earlier torch has no fused kernel on the CPU,
    and a CPU model on an NPU host would fail at construction); no SGD in a module that makes sparse gradients
    (`sparse=True`: `_fused_sgd_` refuses them); no module that names float64 (`.double()`, `torch.float64`: the
    NPU kernels' support of it is not known). A module that names a loss scaler (`GradScaler`, `scaler`,
    accelerate's `Accelerator`, `mixed_precision`) is left: torch_npu's `torch.npu.amp.GradScaler.step` passes
    `grad_scaler=self` to an optimizer that says `_step_supports_amp_scaling`, as torch's fused ones do, and their
    `step()` takes no such argument (TypeError). So is every module of a project whose ported Python names one (a
    scaler made in utils.py steps the optimizer main.py builds); a scaler outside the files ported is not seen, and
    `ascend-port emulate` runs that failure as the device would. In a project that keeps its other devices (the default)
    `fused` is chosen at run time, `True` where the NPU is available and torch's default (None) elsewhere; with
    `--other-devices drop` it is `True`. On an NPU host a model left on the CPU gets torch's CPU kernels, whose
    `_fused_sgd_` (torch 2.4 to 2.13) leaves the SIMD blocks of a bfloat16 or float16 parameter un-updated
    (pytorch/pytorch#191763): SGD on low-precision CPU parameters beside an NPU needs `fused=False` by hand.

    Before:
        import torch
        opt = torch.optim.AdamW(params, lr=1e-3)
    After:
        import torch
        opt = torch.optim.AdamW(params, lr=1e-3, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    """,
)

# The optimizer -> its fused kernel and the parameters it may be given: positionally, and by keyword. Any other
# argument leaves the call alone (a newer torch's option whose NPU support is not known: decoupled_weight_decay).
_ADAM = ("params", "lr", "betas", "eps", "weight_decay", "amsgrad")
_SGD = ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov")
FUSABLE = {
    "torch.optim.AdamW": ("_fused_adamw_", _ADAM),
    "torch.optim.adamw.AdamW": ("_fused_adamw_", _ADAM),
    **{name: (kernel, _SGD if kernel == "_fused_sgd_" else _ADAM) for name, kernel in FUSED_KERNELS.items()},
}
# Options a fused kernel is not known to support on the NPU: only absent or a literal False.
FALSE_ONLY = frozenset({"amsgrad", "maximize", "capturable"})
# torch >= 2.4 has fused Adam/AdamW/SGD kernels on the CPU too (torch/utils/_foreach_utils.py), so a fused=True
# chosen because the host has an NPU still works for a model left on the CPU.
FUSED_ON_CPU_SINCE = (2, 4)
SPARSE = re.compile(r"\bsparse\s*=\s*(?!False\b|None\b)")
# float64 parameters: the NPU kernels' support of them is not known (the NPU has little float64 at all).
FLOAT64 = re.compile(r"\.double\(\)|\bfloat64\b|\btorch\.double\b")


def _may_change(text: str) -> bool:
    """A module the rule may change: it names no loss scaler and no float64."""
    return not SCALER.search(text) and not FLOAT64.search(text)


class FusedByDefaultTransformer(PortTransformer):
    """NPU709."""

    TRIGGERS = (
        Trigger(r"\b(?:AdamW|Adam|SGD)\b", also=("optim",), when=_may_change),
        # apex's FusedAdam/FusedSGD, which NPU505 makes torch.optim's in the same pass (the port stays idempotent)
        Trigger(r"\bFused(?:Adam|SGD)\b", imports=("apex",), when=_may_change),
    )
    RULES = (FUSED_BY_DEFAULT,)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._target = npu_api.target_version(ctx.options)
        self._fused_on_cpu = npu_api.target_torch(ctx.options) >= FUSED_ON_CPU_SINCE

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        optimizer = self.ctx.imports.resolve(updated.func) or ""  # (updated: apex's optimizer NPU505 made torch's)
        if optimizer not in FUSABLE or not self._fused_on_cpu or self.ctx.options.loss_scaling:
            return updated
        if not _may_change(self.ctx.source):  # (the triggers' test too: a whole-module port asks no trigger)
            return updated
        kernel, params = FUSABLE[optimizer]
        if kernel != "_fused_adamw_" and self._target in WITHOUT_FUSED_ADAM_SGD:
            return updated
        if kernel == "_fused_sgd_" and SPARSE.search(self.ctx.source):
            return updated
        if not self._arguments_allow(updated, self.ctx.line_of(original), params):
            return updated
        if self.ctx.options.other_devices == "keep":
            torch = self.ctx.imports.local_name_for("torch")
            if torch is None:  # (`from torch.optim import AdamW` alone: no name to ask torch.npu through)
                return updated
            value = f'True if hasattr({torch}, "npu") and {torch}.npu.is_available() else None'
        else:
            value = "True"
        fused = cst.Arg(keyword=cst.Name("fused"), value=cst.parse_expression(value), equal=_EQUAL)
        message = (
            f"{optimizer}: fused=True on the NPU ({kernel}: one kernel per step instead of foreach's launches per "
            "op; torch's optimizer, its state_dict and zero_grad unchanged)"
        )
        changed = updated.with_changes(args=_with_argument(updated, fused))
        return self.fix(FUSED_BY_DEFAULT, original, changed, message, needs_torch_npu=False) or updated

    def _arguments_allow(self, call: cst.Call, line: int, params: tuple[str, ...]) -> bool:
        """Does nothing the call (at ``line``) passes stand in the way of the fused kernel (see the rule's doc)?"""
        positional = 0
        for arg in call.args:
            if arg.star == "**":
                entries = literal_kwargs(self.ctx, line, arg.value)
                if entries is None or not all(self._allows(k, v, params) for k, v in entries.items()):
                    return False
            elif arg.star or (arg.keyword is None and positional >= len(params)):
                return False
            elif arg.keyword is None:
                positional += 1
                if not self._allows(params[positional - 1], arg.value, params):
                    return False
            elif not self._allows(arg.keyword.value, arg.value, params):
                return False
        return True

    def _allows(self, name: str, value: cst.BaseExpression, params: tuple[str, ...]) -> bool:
        """Is ``name=value`` an argument the fused kernel takes as the unfused optimizer does?"""
        if name in FALSE_ONLY:
            return literal(value) is False
        if name == "lr":  # a tensor made by a torch call (torch.tensor, torch.full...): the kernel takes a float
            return not (
                isinstance(value, cst.Call) and (self.ctx.imports.resolve(value.func) or "").startswith("torch.")
            )
        return name in params


def _with_argument(call: cst.Call, new: cst.Arg) -> list[cst.Arg]:
    """The call's arguments with ``new`` added last, or just before a keyword (or ``**``) argument that carries a
    comment: a comment stays on its argument's line (keyword arguments may come in any order)."""
    args = list(call.args)
    last = args[-1] if args else None
    if last is None or "#" not in code_of(last) or (last.keyword is None and last.star != "**"):
        return finish_args(call, [*args, new])
    separators = [a.comma for a in args[:-1] if isinstance(a.comma, cst.Comma) and "#" not in code_of(a.comma)]
    separator = separators[-1] if separators else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [*args[:-1], new.with_changes(comma=separator), last]


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
# What may be done with a **-argument's dict besides building it: read it, pop a key (fewer keys: still known), and
# pass it on with ** again.
_READS = frozenset({"get", "items", "keys", "values", "copy", "pop"})


def literal_kwargs(ctx: PortContext, line: int, value: cst.BaseExpression) -> dict[str, cst.BaseExpression] | None:
    """The entries of the dict ``value`` names at ``line``, when the function around it (or the module) builds it
    from literal keys only: a dict literal or ``dict(k=v)``, then ``d["k"] = v`` or ``d.update(...)`` of the same
    kinds, and does nothing else with it than read it and pass it with ``**``. None when it does anything else."""
    tree = ctx.module()
    if not isinstance(value, cst.Name) or tree is None:
        return None
    scope: ast.AST = ctx.facts().function_at(line) or tree
    return _dict_entries(scope, value.value)


def _dict_entries(scope: ast.AST, name: str) -> dict[str, cst.BaseExpression] | None:
    """See literal_kwargs: every use of ``name`` in ``scope`` must be one it understands."""
    uses = 0
    understood = 0
    built = 0
    entries: dict[str, ast.expr] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == name:
            uses += 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _is(node.targets[0], name):
            built += 1
            understood += _add(entries, _literal_entries(node.value))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _literal_key(node.targets[0], name):
            understood += _add(entries, {_literal_key(node.targets[0], name) or "": node.value})
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is(node.func.value, name):
            if node.func.attr == "update":
                understood += _add(entries, _literal_entries(ast.Call(ast.Name("dict"), node.args, node.keywords)))
            else:
                understood += node.func.attr in _READS
        elif isinstance(node, ast.keyword) and node.arg is None and _is(node.value, name):
            understood += 1
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _literal_key(node, name):
            understood += 1
    if built != 1 or understood != uses:
        return None
    return {key: cst.parse_expression(ast.unparse(v)) for key, v in entries.items()}


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _literal_key(node: ast.AST, name: str) -> str | None:
    """``k`` of ``name["k"]``."""
    if isinstance(node, ast.Subscript) and _is(node.value, name) and isinstance(node.slice, ast.Constant):
        return node.slice.value if isinstance(node.slice.value, str) else None
    return None


def _literal_entries(value: ast.expr) -> dict[str, ast.expr] | None:
    """The entries of a dict literal or ``dict(k=v, ...)`` with literal keys only; else None."""
    if isinstance(value, ast.Dict):
        keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        # (a key that is no string literal, or None: a ** inside the literal)
        return dict(zip(keys, value.values, strict=True)) if len(keys) == len(value.keys) else None
    if isinstance(value, ast.Call) and _is(value.func, "dict"):
        if len(value.args) == 1 and not value.keywords:
            return _literal_entries(value.args[0])  # (d.update({...}))
        if not value.args and all(k.arg is not None for k in value.keywords):
            return {k.arg: k.value for k in value.keywords if k.arg is not None}
    return None


def _add(entries: dict[str, ast.expr], more: dict[str, ast.expr] | None) -> int:
    """Adds ``more``: 1 use of the name understood, 0 when ``more`` is None (not literal keys)."""
    if more is None:
        return 0
    entries.update(more)
    return 1
