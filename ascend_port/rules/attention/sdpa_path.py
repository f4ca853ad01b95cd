"""NPU407's word on one `F.scaled_dot_product_attention` call: does torch_npu's SDPA reach its fused kernel
(FlashAttentionScore) for these arguments, and why?

The evidence is torch_npu's own SDPA, in Ascend/op-plugin `op_plugin/ops/opapi/ScaledDotProductAttentionKernelNpuOpApi.cpp`
(read at commit 015a2e4b9edce95cd4d84be7fac8a0b0af3036d7; the same code under `VERSION_BETWEEN(V2R1, V2R4)` and
`VERSION_BETWEEN(V2R5, VERSION_NEWEST)`, so torch_npu 2.1 on; the wheels from 2.7.1 ship its header
`scaled_dot_product_attention_npu_dispatch.h`). It calls `npu_fusion_attention` (FlashAttentionScore, BNSD, head_num
= q.size(1), `keep_prob = 1 - dropout_p`, scale or 1/sqrt(E), `is_causal` as sparse_mode 2 with the 2048 triu mask,
a bool mask as `logical_not(mask)`, inner_precise 0) when all of: q/k/v fp16, bf16 or fp32; `attn_mask` bool or
None; q, k, v 4-D; N1 = q.size(1) <= 2048, D = q.size(3) <= 512, N2 = k.size(1) <= 2048 and N1 % N2 == 0 (GQA
whatever `enable_gqa` says: it is not read); an Atlas A2 (910B) or later SoC. Else, where nothing requires grad,
fp16/bf16 with D % 16 == 0 and a bool mask of (.., Sq, Sk) or none (N1/N2 <= 64): npu_fused_infer_attention_score.
Else `_scaled_dot_product_attention_math`: small operators. A floating mask (it must have q's dtype) always takes
the math path, with or without dropout; `is_causal` with a mask raises. Not found: the file's history (only one
version is stored, so which release first had each branch is the version guards' word, not a commit's).

NPU430 (sdpa_fusion.py) ports the calls whose floating mask the code shows to be an attention mask; this module
says what decides for the others.
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
        "the fused kernel, a floating one takes torch_npu's math path (small operators; transformers converts HF's "
        "0/min masks on NPU: `torch.logical_not(mask.bool())`)"
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
