"""NPU3xx: precision and AMP. Autocast and GradScaler device types, autocast state, float64 on the device, bf16
capability checks, LayerNorm upcasts.

Ownership with the device rules (so one site gets one rewrite): `torch.cuda.amp.*` in every import style
(`autocast`, `GradScaler`, `custom_fwd`, `custom_bwd`) is a `torch.cuda` name and is NPU106's, which renames it to
`torch.npu.amp.*` (torch_npu ships all four); every `device_type="cuda"` keyword (`torch.autocast`,
`torch.amp.custom_fwd`) is NPU103's. The rules here take the positional device strings, the GPU-named autocast
state functions, and what needs to understand more than one name.

They run as two transformers: PrecisionCallTransformer reads one call at a time, PrecisionTransformer whole functions
and classes. Both are built in layers, one module each, every layer a subclass of the one below (each hook is defined
in one layer; a layer may use the ones below it); the two share the first three:

- ``base.py``: where they are (enclosing functions, classes and statements; a rotary table or not), the helpers
  several rules use;
- ``layer_norm.py``: NPU305, the upcast removed around LayerNorm (both transformers);
- ``rotary.py``: NPU302, rotary tables (the question both ask; the rewrite is PrecisionTransformer's);
- ``amp.py``: NPU300, NPU301 (PrecisionCallTransformer);
- ``fp64.py``: NPU303 (PrecisionCallTransformer, above amp.py);
- ``bf16.py``: NPU304 (PrecisionTransformer, above rotary.py).

Here the two are composed: their triggers and rules, their ``leave_Call`` (which runs their rules on a call, in
order) and the `layer_norm` calls each recognises for NPU305."""

from __future__ import annotations

import libcst as cst

from ascend_port.python.scopes import FUNCTIONS, Trigger, outermost
from ascend_port.rules.precision.amp import AMP_DEVICE_FIRST, AMP_DEVICE_TYPE, AUTOCAST_GPU, AUTOCAST_GPU_API
from ascend_port.rules.precision.base import _walk
from ascend_port.rules.precision.bf16 import BF16_CAPABILITY, Bf16Rules, capability_wrapper_calls
from ascend_port.rules.precision.fp64 import FP64_MAKERS, FP64_ON_DEVICE, Fp64Rules
from ascend_port.rules.precision.layer_norm import (
    CAST_BACK,
    LAYER_NORM_FUNCTIONS,
    LAYER_NORM_MODULES,
    LAYERNORM_UPCAST,
    layer_norm_module,
    layer_norm_upcast,
)
from ascend_port.rules.precision.rotary import FP64_MARK, ROTARY_FP64, ROTARY_WORD, SAME_TOP_STATEMENT, rotary_scope


class PrecisionCallTransformer(Fp64Rules):
    """NPU300, NPU301, NPU303 and NPU305's `F.layer_norm` form: one call at a time, so it sees single statements
    (autocast, layer_norm and float64 are in most model files; parsing whole classes for them would be slow)."""

    # (the device-type strings NPU300 rewrites say cuda; the GPU-named state functions of NPU301 do not)
    TRIGGERS = (
        r"cuda",
        r"autocast_gpu|autocast_enabled",
        Trigger(r"(?<!self\.)\blayer_norm\(", layer_norm_upcast),
        *FP64_MAKERS,
        r"DoubleTensor",
    )
    RULES = (AMP_DEVICE_TYPE, AUTOCAST_GPU_API, FP64_ON_DEVICE, LAYERNORM_UPCAST)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified in AMP_DEVICE_FIRST:
            updated = self._amp_device(original, updated)
        if qualified in AUTOCAST_GPU:
            updated = self._autocast_gpu(original, updated, qualified)
        if id(original) not in self._chained and not self._in_rotary_table():  # NPU302 rewrites those instead
            self._fp64_on_device(original)
        if isinstance(original.func, cst.Attribute) and original.func.attr.value in CAST_BACK:
            return self._layer_norm_upcast(original, updated)
        return updated

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        return "functional" if self.ctx.imports.resolve(func) in LAYER_NORM_FUNCTIONS else None


class PrecisionTransformer(Bf16Rules):
    """NPU302, NPU304 and NPU305's `nn.LayerNorm` form. These rules read enclosing function and class names, a
    function's blocks, a class's attributes, so their triggers' scopes are whole functions and classes, and the
    triggers are narrow (a rotary def or class followed by float64, a capability call, an upcast next to a cast
    back)."""

    TRIGGERS = (
        # (each starts with a literal, which keeps the regular expression engine fast on big files)
        Trigger(rf"def \w*{ROTARY_WORD}\w*{SAME_TOP_STATEMENT}{{0,4000}}?{FP64_MARK}", rotary_scope),
        Trigger(rf"class \w*{ROTARY_WORD}\w*{SAME_TOP_STATEMENT}{{0,4000}}?{FP64_MARK}", rotary_scope),
        Trigger(rf"(?:inv_freq|freqs?_cis)[^\n]*{FP64_MARK}", rotary_scope),
        # every capability call, however far from the bf16 evidence: a run must decide the same way as the run
        # before it (which may have written NPU108's TODO, itself naming get_device_capability and bf16)
        Trigger(r"get_device_capability", outermost(*FUNCTIONS)),
        # an upcast right before a cast back: `x.float()).type_as(x)`, `x.to(torch.float32)).to(x.dtype)`
        # (two patterns, each with a literal start: ``re`` then finds the start by a fast search)
        Trigger(r"\.float\(\)\s*\)\s*\.(?:type_as|to|type)\(", layer_norm_module, also=("layernorm",)),
        Trigger(r"float32\s*\)\s*\)\s*\.(?:type_as|to|type)\(", layer_norm_module, also=("layernorm",)),
    )
    RULES = (ROTARY_FP64, BF16_CAPABILITY, LAYERNORM_UPCAST)
    # (the calls of a capability wrapper, `capability() >= (8, 0)`, whose lines name no trigger)
    option_triggers = staticmethod(capability_wrapper_calls)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._layer_norms: dict[int, tuple[set[str], bool]] = {}  # class -> (nn.LayerNorm attributes, subclass?)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        new = self._rotary_dtypes(original, updated) if self._in_rotary_table() else updated
        if (
            isinstance(original.func, cst.Attribute)
            and original.func.attr.value in CAST_BACK
            and isinstance(new, cst.Call)
        ):
            return self._layer_norm_upcast(original, new)
        return new

    def _class_layer_norms(self, node: cst.ClassDef) -> tuple[set[str], bool]:
        """The ``self.X = nn.LayerNorm(...)`` attributes of a class, and whether it subclasses nn.LayerNorm."""
        if id(node) not in self._layer_norms:
            resolve = self.ctx.imports.resolve
            subclass = any(resolve(base.value) in LAYER_NORM_MODULES for base in node.bases)
            attributes = set()
            for child, _ in _walk(node.body):
                if (
                    isinstance(child, cst.Assign)
                    and isinstance(child.value, cst.Call)
                    and resolve(child.value.func) in LAYER_NORM_MODULES
                ):
                    for target in child.targets:
                        t = target.target
                        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                            attributes.add(t.attr.value)
            self._layer_norms[id(node)] = (attributes, subclass)
        return self._layer_norms[id(node)]

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        if not self._classes or not isinstance(func, cst.Attribute):
            return None
        attributes, subclass = self._class_layer_norms(self._classes[-1])
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return "module" if func.attr.value in attributes else None
        is_super = (
            isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name)
            and func.value.func.value == "super"
        )
        return "module" if subclass and is_super and func.attr.value == "forward" else None
