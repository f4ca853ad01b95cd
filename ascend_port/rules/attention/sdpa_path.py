"""NPU407's word on one `F.scaled_dot_product_attention` call: does torch_npu's SDPA reach its fused kernel
(FlashAttentionScore) for these arguments, and why?

The evidence, per release not established (SDPA's dispatch is in torch_npu's C++ op-plugin, not in its Python
sources): torch_npu's documentation of torch.nn.functional (bool `attn_mask` only, and none with `is_causal`) and
transformers' integrations/sdpa_attention.py, which on NPU turns a float mask into a bool one because "the Ascend
NPU's SDPA interface cannot utilize the FlashAttentionScore operator" otherwise ("falls back to small-operator
concatenation"). So the call is reported, never rewritten: what decides is said for the call.
"""

from __future__ import annotations

import libcst as cst

from ascend_port.python.calls import code_of

PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
# Methods and functions whose result is a bool tensor.
BOOL_METHODS = {"bool", "logical_not", "logical_and", "logical_or", "isfinite", "isnan", "eq", "ne", "lt", "gt"}
BOOL_FUNCTIONS = {"logical_not", "logical_and", "logical_or", "isfinite", "isnan", "eq", "ne", "lt", "gt"}


def sdpa_path(call: cst.Call) -> str:
    """What the call's arguments mean for torch_npu's SDPA: the fused kernel, or the small operators, and why."""
    arguments = _bound(call)
    if arguments is None:
        return "whether it reaches the fused kernel depends on its arguments (given by * or **): a bool attn_mask or is_causal does"
    mask = arguments.get("attn_mask")
    if mask is None or code_of(mask).strip() == "None":
        return "no attn_mask: reaches the fused kernel (FlashAttentionScore)"
    if _bool_valued(mask):
        return f"attn_mask `{code_of(mask).strip()}` is bool: reaches the fused kernel (FlashAttentionScore)"
    return (
        f"attn_mask `{code_of(mask).strip()}` of a dtype the code does not show: a bool mask (True = attend) reaches "
        "the fused kernel, a float one falls back to small operators (transformers converts it on NPU: "
        "`torch.logical_not(mask.bool())` for HF's 0/min masks)"
    )


def _bound(call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    out: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            out[arg.keyword.value] = arg.value
        elif i < len(PARAMETERS):
            out[PARAMETERS[i]] = arg.value
    return out


def _bool_valued(node: cst.BaseExpression) -> bool:
    """Is ``node`` provably a bool tensor: a comparison, `~m`, `.bool()`, `.to(torch.bool)`, a logical op."""
    if isinstance(node, cst.Comparison) or (
        isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert)
    ):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, (cst.Attribute, cst.Name)):
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
        if name in BOOL_METHODS or name in BOOL_FUNCTIONS:
            return True
        if name == "to" and any(code_of(a.value).strip().endswith(".bool") for a in node.args):
            return True
    return False
