"""NPU300, NPU301: automatic mixed precision. The device type that autocast, GradScaler and the autocast state
functions take first (`"cuda"` -> `"npu"`), and the GPU-named autocast state functions (-> `torch.npu.*`); the
device rules own the rest of AMP (`torch.cuda.amp.*`, `device_type=`: see the package's docstring)."""

from __future__ import annotations

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import build_dotted
from ascend_port.rules.device.strings import rewrite_device_expr
from ascend_port.rules.precision.rotary import RotaryScope

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

AMP_DEVICE_TYPE = rule(
    "NPU300",
    "amp-device-type",
    HIGH,
    'Positional `"cuda"` of `torch.autocast`, `torch.amp.autocast`, `torch.amp.GradScaler` and the autocast '
    'state functions -> `"npu"`.',
    """
    `torch.autocast("cuda")`, `torch.amp.autocast("cuda", dtype=...)`, `torch.amp.GradScaler("cuda")`,
    `torch.is_autocast_enabled("cuda")`, `torch.get_autocast_dtype("cuda")`, `torch.set_autocast_dtype("cuda", d)`,
    `torch.set_autocast_enabled("cuda", b)` and `torch.amp.is_autocast_available("cuda")` take the device type
    first. Ownership: the keyword form `device_type="cuda"` (also of `torch.amp.custom_fwd/custom_bwd`) is rewritten
    by NPU103, and `torch.cuda.amp.autocast/GradScaler/custom_fwd/custom_bwd` (calls, decorators and
    `from torch.cuda.amp import ...`) by NPU106, to `torch.npu.amp.*`; this rule never touches those.

    Before:
        import torch
        scaler = torch.amp.GradScaler("cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch)
    After:
        import torch
        scaler = torch.amp.GradScaler("npu")
        with torch.autocast("npu", dtype=torch.bfloat16):
            loss = model(batch)
    Stays (autocast on the CPU):
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            pass
    """,
)
AUTOCAST_GPU_API = rule(
    "NPU301",
    "autocast-gpu-api",
    HIGH,
    "`torch.get_autocast_gpu_dtype()`, `set_autocast_gpu_dtype`, `is_autocast_enabled()` -> `torch.npu.*`.",
    """
    The GPU-named autocast state functions (and the no-device forms that mean the GPU) have `torch.npu`
    counterparts in torch_npu: `torch.get_autocast_gpu_dtype()` -> `torch.npu.get_autocast_dtype()`,
    `torch.set_autocast_gpu_dtype(d)` -> `torch.npu.set_autocast_dtype(d)`, `torch.is_autocast_enabled()` ->
    `torch.npu.is_autocast_enabled()`, `torch.set_autocast_enabled(b)` -> `torch.npu.set_autocast_enabled(b)`.
    The forms that name a device (`torch.is_autocast_enabled("cuda")`) are NPU300's.

    Before:
        import torch
        dtype = torch.get_autocast_gpu_dtype()
    After:
        import torch
        dtype = torch.npu.get_autocast_dtype()
    """,
)


# --- tables ------------------------------------------------------------------------------------------------------

AMP_DEVICE_FIRST = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
    "torch.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
    "torch.is_autocast_enabled",
    "torch.get_autocast_dtype",
    "torch.set_autocast_dtype",
    "torch.set_autocast_enabled",
    "torch.amp.is_autocast_available",
    "torch.amp.autocast_mode.is_autocast_available",
}
# qualified -> (torch.npu name, how many positional arguments the GPU-meaning form has)
AUTOCAST_GPU = {
    "torch.get_autocast_gpu_dtype": ("get_autocast_dtype", 0),
    "torch.set_autocast_gpu_dtype": ("set_autocast_dtype", 1),
    "torch.is_autocast_enabled": ("is_autocast_enabled", 0),
    "torch.set_autocast_enabled": ("set_autocast_enabled", 1),
}


class AmpRules(RotaryScope):
    """NPU300 and NPU301 (PrecisionCallTransformer): the calls they rewrite, one at a time."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.api = npu_api.target_api(ctx.options)  # the target release (--torch-npu)

    def _amp_device(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        if not args or args[0].keyword is not None or args[0].star:
            return updated
        new = rewrite_device_expr(args[0].value, containers=False)
        if new is None:
            return updated
        args[0] = args[0].with_changes(value=new)
        return (
            self.fix(AMP_DEVICE_TYPE, original, updated.with_changes(args=args), "AMP device type cuda -> npu")
            or updated
        )

    def _autocast_gpu(self, original: cst.Call, updated: cst.Call, qualified: str) -> cst.Call:
        name, arity = AUTOCAST_GPU[qualified]
        torch = self.ctx.imports.local_name_for("torch")
        if torch is None or not self.api.has(name) or any(a.keyword is not None or a.star for a in original.args):
            return updated
        if len(original.args) != arity or any(
            isinstance(a.value, (cst.SimpleString, cst.FormattedString)) for a in original.args
        ):
            return updated  # a device-type argument: the torch.* function is right (NPU300 fixes the string)
        short = qualified.removeprefix("torch.")
        return (
            self.fix(
                AUTOCAST_GPU_API,
                original,
                updated.with_changes(func=build_dotted(f"{torch}.npu.{name}")),
                f"torch.{short} -> torch.npu.{name}",
            )
            or updated
        )
