"""NPU305: the float32 upcasts around LayerNorm, removed. Both transformers share its rewrite (LayerNormRules):
PrecisionCallTransformer recognises `F.layer_norm`, PrecisionTransformer a class's `nn.LayerNorm` (each says which
calls by ``_layer_norm_kind``)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import enclosing
from ascend_port.rules.precision.base import PrecisionRules, _code, _positional

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

LAYERNORM_UPCAST = rule(
    "NPU305",
    "layernorm-upcast",
    MEDIUM,
    "`F.layer_norm(x.float(), ...).type_as(x)` and `nn.LayerNorm` upcasts -> the upcast removed.",
    """
    Code written for fp16 GPUs upcasts around LayerNorm and casts back. The NPU LayerNorm kernel takes fp16 and
    bf16 inputs and accumulates in float32 itself, so the two casts only cost memory traffic. `.float()` (and
    `.to(torch.float32)`) on the input of `F.layer_norm`, of an `nn.LayerNorm` attribute of the same class, or of
    `super().forward` in an `nn.LayerNorm` subclass is removed when a cast back (`.type_as(x)`, `.to(x.dtype)`,
    `.type(x.dtype)`) names the same `x`; for `F.layer_norm`, `.float()` on the weight and bias arguments goes too.
    The cast back stays: under `torch.autocast("npu")` torch_npu runs layer_norm in float32 (its autocast fp32
    list), and the result must keep x's dtype as in the original (outside autocast the cast is a no-op). Medium:
    results differ in the last bits, and a model that keeps LayerNorm weights in float32 while activations are
    bf16 now passes mixed dtypes outside autocast; review.

    Before:
        import torch.nn.functional as F
        def forward(self, x):
            return F.layer_norm(x.float(), self.shape, self.weight.float(), self.bias.float(), self.eps).type_as(x)
    After:
        import torch.nn.functional as F
        def forward(self, x):
            return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps).type_as(x)
    Stays (an upcast with no cast back: the float32 result is what the code wants):
        import torch.nn.functional as F


        def norm(x):
            return F.layer_norm(x.float(), (16,))
    """,
)


# --- tables ------------------------------------------------------------------------------------------------------

LAYER_NORM_FUNCTIONS = {"torch.nn.functional.layer_norm", "torch.layer_norm"}
LAYER_NORM_MODULES = {"torch.nn.LayerNorm", "torch.nn.modules.normalization.LayerNorm"}
CAST_BACK = {"type_as", "to", "type"}


# --- scopes of the triggers (see python/scopes.py) ---------------------------------------------------------


def layer_norm_upcast(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The statement, if it calls a function named layer_norm with an upcast first argument (`x.float()`,
    `x.to(torch.float32)`): NPU305's functional form."""

    def upcast(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("float", "to", "type")
        )

    statement = path[-1]
    calls = (n for n in ast.walk(statement) if isinstance(n, ast.Call) and n.args and upcast(n.args[0]))
    named = (c.func.id if isinstance(c.func, ast.Name) else getattr(c.func, "attr", None) for c in calls)
    return statement if "layer_norm" in named else None


def layer_norm_module(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The innermost class around a match, if it names LayerNorm (an attribute or a base: NPU305's module form)."""
    cls = enclosing(path, ast.ClassDef)
    if cls is None:
        return None
    names = (
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(cls) if isinstance(n, (ast.Name, ast.Attribute))
    )
    return cls if "LayerNorm" in names else None


def _cast_back_target(original: cst.Call, updated: cst.Call) -> str | None:
    """The code of the tensor whose dtype ``<call>.type_as(x)`` or ``<call>.to(x.dtype)`` casts back to; None for
    any other one-argument method call, or when the value cast back is not a call (in both trees)."""
    if len(original.args) != 1 or original.args[0].keyword is not None or original.args[0].star:
        return None
    func, new_func = original.func, updated.func
    if not isinstance(func, cst.Attribute) or not isinstance(new_func, cst.Attribute):
        return None
    if not isinstance(func.value, cst.Call) or not isinstance(new_func.value, cst.Call):
        return None
    back = original.args[0].value
    if func.attr.value == "type_as":
        return _code(back)
    if isinstance(back, cst.Attribute) and back.attr.value == "dtype":
        return _code(back.value)
    return None


class LayerNormRules(PrecisionRules):
    """NPU305's rewrite, which both transformers share: the upcast of the input (and, for `F.layer_norm`, of the
    weight and bias) taken off where a cast back names the same tensor."""

    def _layer_norm_kind(self, func: cst.BaseExpression) -> str | None:
        """ "functional" (F.layer_norm), "module" (an nn.LayerNorm), or None."""
        raise NotImplementedError

    def _layer_norm_upcast(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        target = _cast_back_target(original, updated)
        if (
            target is None
            or not isinstance(original.func, cst.Attribute)
            or not isinstance(updated.func, cst.Attribute)
        ):
            return updated
        inner, new_inner = original.func.value, updated.func.value
        if not isinstance(inner, cst.Call) or not isinstance(new_inner, cst.Call):
            return updated  # (_cast_back_target saw calls on both sides)
        kind = self._layer_norm_kind(inner.func)
        if kind is None:
            return updated
        first = _positional(inner)[:1]
        base = self._upcast_base(first[0].value) if first else None
        if base is None or _code(base) != target:
            return updated
        args = self._without_upcasts(inner, new_inner, first[0], functional=kind == "functional")
        # The cast back stays: under autocast torch_npu runs layer_norm in float32 (its autocast fp32 list), so
        # without it the result would be float32 where the original returned x's dtype. Outside autocast it is a
        # no-op.
        replacement = updated.with_changes(func=updated.func.with_changes(value=new_inner.with_changes(args=args)))
        message = "LayerNorm float32 upcast removed (the cast back kept for autocast)"
        return self.fix(LAYERNORM_UPCAST, original, replacement, message) or updated

    def _without_upcasts(self, inner: cst.Call, new_inner: cst.Call, first: cst.Arg, functional: bool) -> list[cst.Arg]:
        """The arguments of ``new_inner`` (the transformed ``inner``) with the float32 upcast of the input taken off,
        and of the weight and bias too for the functional form (they were upcast to match the input)."""
        args = list(new_inner.args)
        position = -1
        for i, (old, new) in enumerate(zip(inner.args, args)):
            if old.keyword is None and not old.star:
                position += 1
            keyword = old.keyword.value if old.keyword is not None else None
            weight_or_bias = functional and (position in (2, 3) if keyword is None else keyword in ("weight", "bias"))
            if old is first or weight_or_bias:
                base = self._upcast_base(new.value)
                if base is not None:
                    args[i] = new.with_changes(value=base)
        return args

    def _upcast_base(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``x.float()``, ``x.to(torch.float32)``, ``x.type(torch.float32)``; else None."""
        resolve = self.ctx.imports.resolve
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) or resolve(expr.func):
            return None
        method = expr.func.attr.value
        if method == "float" and not expr.args:
            return expr.func.value
        if (
            method in ("to", "type")
            and len(expr.args) == 1
            and expr.args[0].keyword is None
            and resolve(expr.args[0].value) in ("torch.float32", "torch.float")
        ):
            return expr.func.value
        return None
