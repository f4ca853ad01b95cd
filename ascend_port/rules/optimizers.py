"""NPU708: torch.optim's `fused=True` where the target torch-npu has no fused kernel for the optimizer.

`torch.optim.Adam/AdamW/SGD(fused=True)` pass torch's device check on the NPU (torch lists the PrivateUse1 backend
among its fused devices) and call `torch._fused_adam_` / `_fused_adamw_` / `_fused_sgd_` at the first step, which
fail there unless libtorch_npu registers the kernel. Which releases do was read from each wheel's
`torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`.
"""

from __future__ import annotations

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of
from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import PortTransformer

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
