"""NPU400-NPU409: attention. flash-attn and xformers calls -> torch_npu.npu_fusion_attention (through one small helper
written into the module, see attention_helpers.py), SDPA reported as native, and what has no mapping marked TODO.

The traps every rewrite here encodes (ascend-api-facts §2.3): npu_fusion_attention's `scale` defaults to 1.0, not
1/sqrt(head_dim); its bool mask means True = masked out; its causal modes need a compressed 2048x2048 mask with
sparse_mode 2 (top-left) or 3 (bottom-right, what flash-attn >= 2.1 does); head_num is the number of query heads (GQA
needs no repeat); varlen (TND) takes cumulative sequence ends as host lists. The helper does all of that, so a call
site stays a readable one-line change and the traps live in one reviewed place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.core.porting import PortError
from ascend_port.python.calls import NO_SPACE, bind, code_of, finish_args, keyword_arg, literal, unbind_arg
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.attention import padding
from ascend_port.rules.attention.fused_ops import _plain_reference
from ascend_port.rules.attention.helper_names import FLASH_HELPER, XFORMERS_HELPER
from ascend_port.rules.attention.helpers import BACKENDS, insert_helpers
from ascend_port.rules.attention.mask_callers import attention_mask_values
from ascend_port.rules.attention.sdpa_path import sdpa_path

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

FLASH_ATTN = rule(
    "NPU400",
    "flash-attn-func",
    HIGH,
    "`flash_attn_func` (and its qkv/kv-packed forms) -> `torch_npu.npu_fusion_attention` (BSND) via a helper.",
    f"""
    The call becomes a call of `{FLASH_HELPER}`, a helper with flash_attn_func's parameters that ascend-port writes
    once into the module (before its first use). The helper calls `torch_npu.npu_fusion_attention(q, k, v,
    q.shape[2], "BSND", ...)[0]` with: head_num = query heads (GQA needs no repeat); `scale` = softmax_scale, or
    `q.shape[-1] ** -0.5` when None (the op's own default is 1.0); `keep_prob = 1.0 - dropout_p` (your dropout
    expression is passed unchanged); for `causal=True` the compressed 2048x2048 `triu(..., diagonal=1)` bool mask,
    built once per device, with `sparse_mode=3`, the bottom-right alignment of flash-attn >= 2.1.
    `flash_attn_qkvpacked_func(qkv)` passes `*qkv.unbind(2)`, `flash_attn_kvpacked_func(q, kv)` passes
    `q, *kv.unbind(2)`. Every import style is followed (`from flash_attn import ...`,
    `flash_attn.flash_attn_interface`, `import flash_attn`). Arguments after `causal` must be keywords (their
    positions changed between flash-attn releases); `softcap`, `alibi_slopes` and `return_attn_probs=True` have
    no mapping: NPU403 marks such calls and leaves them unchanged. `deterministic=` only chooses flash-attn's
    backward algorithm (the forward result is the same), so any value of it is dropped: on NPU a deterministic
    backward is `torch.use_deterministic_algorithms(True)` (or `torch_npu.npu.enable_deterministic_with_backward`).

    Before:
        import torch
        from flash_attn import flash_attn_func


        def forward(self, q, k, v):
            return flash_attn_func(q, k, v, dropout_p=self.p if self.training else 0.0, causal=True)
    After:
        import torch
        import torch_npu


        _NPU_ATTENTION_MASKS = {{}}


        def {FLASH_HELPER}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                            cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
            ...


        def forward(self, q, k, v):
            return {FLASH_HELPER}(q, k, v, dropout_p=self.p if self.training else 0.0, causal=True)
    """,
)
FLASH_VARLEN = rule(
    "NPU401",
    "flash-attn-varlen",
    HIGH,
    '`flash_attn_varlen_func` (and packed forms) -> `npu_fusion_attention` "TND" with cumulative sequence ends.',
    f"""
    `flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, ...)` becomes
    `{FLASH_HELPER}(q, k, v, ..., cu_seqlens_q=..., cu_seqlens_k=...)`; the helper calls the op with layout "TND",
    head_num = `q.shape[1]` and `actual_seq_qlen`/`actual_seq_kvlen` = `cu_seqlens[1:].tolist()` (the op wants the
    cumulative ends as host lists: this reads the tensors back, as transformers' NPU integration does). The
    `max_seqlen_*` hints are not needed by the op and are dropped. Causal masks align bottom-right within each
    sequence, as in flash-attn. `flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen)` passes
    `*qkv.unbind(1)` and uses `cu_seqlens` for both sides (a plain name or attribute only);
    `flash_attn_varlen_kvpacked_func` passes `q, *kv.unbind(1)`.

    Before:
        import torch
        from flash_attn import flash_attn_varlen_func


        def attention(q, k, v, cu_q, cu_k, max_q, max_k):
            return flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True)
    After:
        import torch
        import torch_npu


        _NPU_ATTENTION_MASKS = {{}}


        def {FLASH_HELPER}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                            cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
            ...


        def attention(q, k, v, cu_q, cu_k, max_q, max_k):
            return {FLASH_HELPER}(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=True)
    """,
)
FLASH_WINDOW = rule(
    "NPU402",
    "flash-attn-window",
    MEDIUM,
    "flash-attn `window_size=(left, right)` (sliding window) -> `sparse_mode=4` band with pre/next_tockens.",
    f"""
    flash-attn lets query i see keys [i + Sk - Sq - left, i + Sk - Sq + right] (-1: unbounded; causal forces
    right = 0). The helper maps that to npu_fusion_attention's band mode, `sparse_mode=4` with
    `pre_tockens=left`, `next_tockens=right` (0 when causal) and the compressed 2048x2048 mask, whose origin is the
    bottom-right corner too. Medium: band mode is the documented equivalent, but check long-sequence accuracy.
    Calls with `window_size=(-1, -1)` are plain NPU400/NPU401 rewrites.

    Before:
        import torch
        from flash_attn import flash_attn_func


        def forward(self, q, k, v):
            return flash_attn_func(q, k, v, causal=True, window_size=(self.window, 0))
    After:
        import torch
        import torch_npu


        _NPU_ATTENTION_MASKS = {{}}


        def {FLASH_HELPER}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                            cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
            ...


        def forward(self, q, k, v):
            return {FLASH_HELPER}(q, k, v, causal=True, window_size=(self.window, 0))
    """,
)
FLASH_UNSUPPORTED = rule(
    "NPU403",
    "flash-attn-unsupported-argument",
    LOW,
    "flash-attn calls with `softcap`, `alibi_slopes`, `return_attn_probs`, ... : TODO, the call is left unchanged.",
    """
    npu_fusion_attention has no logit soft-capping; ALiBi needs a `pse` bias tensor that the op also scales (build
    it by hand); it never returns the attention probabilities; and flash-attn's positional arguments after
    `causal` changed meaning between releases (`window_size`, `softcap`, `alibi_slopes`, `return_attn_probs`).
    Dropping any of these would compute something else, so the call keeps flash-attn and gets a TODO. Literal
    defaults (`softcap=0.0`, `alibi_slopes=None`, `return_attn_probs=False`) are fine, and so is any
    `deterministic=` (it only picks the backward algorithm: the forward result does not depend on it).

    Before:
        from flash_attn import flash_attn_func
        out = flash_attn_func(q, k, v, causal=True, softcap=30.0)
    After:
        from flash_attn import flash_attn_func
        # TODO(ascend-port): NPU403 [low] flash_attn_func left on flash-attn: softcap=30.0 has no npu_fusion_attention mapping
        out = flash_attn_func(q, k, v, causal=True, softcap=30.0)
    Stays (PyTorch's own attention, which runs on the NPU as it is (NPU407 says so)):
        import torch.nn.functional as F


        def attend(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    """,
)
FLASH_KVCACHE = rule(
    "NPU404",
    "flash-attn-kvcache",
    LOW,
    "`flash_attn_with_kvcache` and paged decoding: TODO naming `torch_npu.npu_fused_infer_attention_score`.",
    """
    Decoding with a KV cache (and paged `block_table`s) maps to the inference op
    `torch_npu.npu_fused_infer_attention_score` (`block_table`, `actual_seq_lengths`, `num_key_value_heads`,
    `sparse_mode`), whose cache layout differs from flash-attn's; the port is manual.

    Before:
        from flash_attn import flash_attn_with_kvcache
        out = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True)
    After:
        # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port flash_attn_with_kvcache ...
        from flash_attn import flash_attn_with_kvcache
        # TODO(ascend-port): NPU404 [low] flash_attn_with_kvcache: ... torch_npu.npu_fused_infer_attention_score ...
        out = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True)
    """,
)
XFORMERS = rule(
    "NPU405",
    "xformers-memory-efficient-attention",
    MEDIUM,
    "`xformers.ops.memory_efficient_attention` -> `npu_fusion_attention` (BMHK = BSND) via a helper.",
    f"""
    `memory_efficient_attention(q, k, v, attn_bias, p, scale)` becomes `{XFORMERS_HELPER}(q, k, v, p=..., scale=...)`,
    a helper written into the module that runs the flash-attn helper: BMHK inputs are BSND, BMK inputs (no head
    axis, as diffusers passes them) run as one head; `scale=None` means `q.shape[-1] ** -0.5` as in xformers;
    `keep_prob = 1 - p`. `attn_bias=None` is no mask, `LowerTriangularMask()` is causal aligned top-left
    (`sparse_mode=2`), `LowerTriangularFromBottomRightMask()` causal bottom-right (`sparse_mode=3`). A tensor
    `attn_bias` the code shows to be an attention mask (0 where attended, a large negative where not: diffusers'
    `attn.prepare_attention_mask(...)`, expanded over the queries), read as NPU430 reads SDPA's mask (its name says
    mask, no word of it or of what is assigned to it says bias, nothing is added to it, no caller in the module passes
    a bias for it), is passed as `mask=`: the helper gives the op `atten_mask = mask < 0` (a row masked in full comes
    out as 0, `inner_precise=2`). Any other bias gets NPU406's TODO. `op=` (the xformers kernel choice) is dropped.
    Medium: the BMGHK (5-D) form is not supported by the helper (the op raises), and a mask is read as a mask:
    entries between 0 and the large negative (a bias in a mask's name) would be masked out in full.

    Before:
        import torch
        import xformers.ops as xops


        def forward(self, q, k, v):
            return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask(), p=self.p)
    After:
        import torch
        import torch_npu


        _NPU_ATTENTION_MASKS = {{}}


        def {FLASH_HELPER}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                            cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
            ...


        def {XFORMERS_HELPER}(q, k, v, p=0.0, scale=None, causal=False, top_left=False, mask=None):
            ...


        def forward(self, q, k, v):
            return {XFORMERS_HELPER}(q, k, v, p=self.p, causal=True, top_left=True)
    """,
)
XFORMERS_BIAS = rule(
    "NPU406",
    "xformers-attn-bias",
    LOW,
    "xformers attention biases other than None, the two lower-triangular masks and an attention mask: TODO, the "
    "call is unchanged.",
    """
    A tensor bias is added to the scores after scaling in xformers, while npu_fusion_attention's `pse` is added
    before its `scale` (a tensor the code shows to be an attention mask is NPU405's); `BlockDiagonalMask` (packed
    sequences) maps to the varlen layout "TND" with cumulative sequence ends; other bias classes need their own
    mask. None of these can be derived from the call alone.

    Before:
        import xformers.ops as xops
        from xformers.ops.fmha.attn_bias import BlockDiagonalMask
        out = xops.memory_efficient_attention(q, k, v, attn_bias=BlockDiagonalMask.from_seqlens(lens))
    After:
        import xformers.ops as xops
        # TODO(ascend-port): NPU409 [low] xformers has no NPU build, so this import fails there: port BlockDiagonalMask ...
        from xformers.ops.fmha.attn_bias import BlockDiagonalMask
        # TODO(ascend-port): NPU406 [low] memory_efficient_attention left on xformers: attn_bias=BlockDiagonalMask.from_seqlens(lens) ...
        out = xops.memory_efficient_attention(q, k, v, attn_bias=BlockDiagonalMask.from_seqlens(lens))
    """,
)
SDPA_NATIVE = rule(
    "NPU407",
    "sdpa-native",
    HIGH,
    "`F.scaled_dot_product_attention` runs natively on NPU: reported as compatible, never changed.",
    """
    torch_npu implements SDPA with its FlashAttentionScore kernel; the call stays as it is. What reaches the kernel
    is in Ascend/op-plugin's `op_plugin/ops/opapi/ScaledDotProductAttentionKernelNpuOpApi.cpp` (torch_npu 2.1 on,
    by its version guards): q/k/v fp16, bf16 or fp32 and 4-D (BNSD), `attn_mask` bool (True = attend) or None,
    `is_causal` (no mask: sparse_mode 2), any `dropout_p`, N <= 2048 query heads, a multiple of the key/value heads
    (GQA, whatever `enable_gqa` says), head dim <= 512, an Atlas A2 (910B) or later. A floating mask goes to
    `_scaled_dot_product_attention_math` (small operators); so do other shapes (inference without grad may take
    npu_fused_infer_attention_score: fp16/bf16, head dim a multiple of 16). The finding says which for the call:
    no mask, or one the code shows bool (a comparison, `~m`, `.bool()`), reaches the fused kernel; a mask of a dtype
    the code does not show is named with what decides. A floating mask the code shows to be an attention mask is
    ported by NPU430 (sdpa-float-mask-fusion) and this finding is not made for it. This rule only reports (it writes
    neither code nor a TODO).

    Before:
        import torch.nn.functional as F
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    After:
        import torch.nn.functional as F
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    """,
    informational=True,
)
GPU_ATTENTION_IMPORT = rule(
    "NPU409",
    "gpu-attention-import",
    LOW,
    "flash_attn/xformers imports of names the port cannot replace (layers, rotary, FA3): TODO.",
    """
    flash-attn and xformers are built with CUDA kernels and cannot be installed on an NPU host, so any import of
    them fails there (or always takes the `except ImportError` branch). Imports of the functions NPU400-NPU405
    port, and of the padding utilities NPU410 replaces, go away with their last use (NPU408); an import of anything
    else (`flash_attn.layers.rotary`, `xformers.ops.fmha.BlockDiagonalMask`, flash-attn 3's `flash_attn_interface`,
    an `unpad_input` whose result is not unpacked) or of a ported function used as a value
    (`attn_fn = flash_attn_func`) gets this TODO naming what is left.

    Before:
        from flash_attn.layers.rotary import apply_rotary_emb
    After:
        # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: ...
        from flash_attn.layers.rotary import apply_rotary_emb
    """,
)

FLASH_MODULES = ("flash_attn", "flash_attn.flash_attn_interface")
GPU_ATTENTION_MODULE = re.compile(r"^(flash_attn\w*|xformers)(\.|$)")
SDPA = {"torch.nn.functional.scaled_dot_product_attention"}
XFORMERS_FUNCTIONS = {"xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention"}
XFORMERS_BIAS_MODULES = ("xformers.ops", "xformers.ops.fmha", "xformers.ops.fmha.attn_bias")
TOP_LEFT_MASK, BOTTOM_RIGHT_MASK = "LowerTriangularMask", "LowerTriangularFromBottomRightMask"
COMMON = ("dropout_p", "softmax_scale", "causal")
# Keywords after `causal`: the value each may have to be dropped (a default), or None if it is handled elsewhere.
FLASH_TAIL = {
    "window_size": None,
    "softcap": 0.0,
    "alibi_slopes": None,
    "deterministic": None,
    "return_attn_probs": False,
}
# Keywords that do not change the forward result (`deterministic` picks the backward's algorithm): dropped whatever
# their value, as long as dropping it drops no side effect (a name, an attribute or a literal).
FORWARD_NEUTRAL = ("deterministic",)


@dataclass(frozen=True)
class FlashSpec:
    tensors: tuple[str, ...]  # leading tensor parameters
    seqs: tuple[str, ...] = ()  # varlen parameters between the tensors and dropout_p
    unbind: int = 0  # dim of the packed axis to unbind (0: not packed)

    @property
    def varlen(self) -> bool:
        return bool(self.seqs)

    @property
    def params(self) -> tuple[str, ...]:
        return (*self.tensors, *self.seqs, *COMMON)


FLASH_SPECS = {
    "flash_attn_func": FlashSpec(("q", "k", "v")),
    "flash_attn_qkvpacked_func": FlashSpec(("qkv",), unbind=2),
    "flash_attn_kvpacked_func": FlashSpec(("q", "kv"), unbind=2),
    "flash_attn_varlen_func": FlashSpec(
        ("q", "k", "v"), ("cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k")
    ),
    "flash_attn_varlen_qkvpacked_func": FlashSpec(("qkv",), ("cu_seqlens", "max_seqlen"), unbind=1),
    "flash_attn_varlen_kvpacked_func": FlashSpec(
        ("q", "kv"), ("cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k"), unbind=1
    ),
}
PORTABLE = {
    *(f"{m}.{f}" for m in FLASH_MODULES for f in FLASH_SPECS),
    *XFORMERS_FUNCTIONS,
    *(f"{m}.{c}" for m in XFORMERS_BIAS_MODULES for c in (TOP_LEFT_MASK, BOTTOM_RIGHT_MASK)),
    *padding.PORTABLE,
}
# Modules that `from flash_attn import ...` may bind: fine when every use of them is a ported call.
PORTABLE_MODULES = {padding.MODULE, "flash_attn.flash_attn_interface"}
_PATTERNS = (r"\bflash_attn", r"xformers|memory_efficient_attention|LowerTriangular", r"scaled_dot_product_attention")
TRIGGER = re.compile("|".join(_PATTERNS))  # (the names whose statements the rules read)
# Every call and import these rules port resolves through an import of flash-attn or xformers: a module that only
# names them (`is_flash_attn_2_available()`, `enable_xformers_memory_efficient_attention()`) has nothing to port.
TRIGGERS = (
    Trigger(_PATTERNS[0], imports=("flash_attn",)),
    Trigger(_PATTERNS[1], imports=("xformers",)),
    _PATTERNS[2] + r"\s*\(",  # (a call: NPU407 notes those; `hasattr(F, "scaled_dot_product_attention")` is none)
)


# The rules each emitted helper names in its docstring.
_HELPER_CREDITS = {FLASH_HELPER: f"rules {FLASH_ATTN.id}-{XFORMERS.id}", XFORMERS_HELPER: f"rule {XFORMERS.id}"}


class AttentionTransformer(PortTransformer):
    """NPU400-NPU407 and NPU409; the helper definitions are written by ``finish`` once the calls are ported."""

    TRIGGERS = TRIGGERS
    RULES = (
        FLASH_ATTN,
        FLASH_VARLEN,
        FLASH_WINDOW,
        FLASH_UNSUPPORTED,
        FLASH_KVCACHE,
        XFORMERS,
        XFORMERS_BIAS,
        SDPA_NATIVE,
        GPU_ATTENTION_IMPORT,
    )

    def __init__(self, ctx: PortContext) -> None:
        super().__init__(ctx)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        backend = ctx.options.attention_backend
        if backend not in BACKENDS:
            raise PortError(f"unknown attention backend {backend!r}: use {' or '.join(BACKENDS)}")
        return insert_helpers(text, tree, backend, _HELPER_CREDITS)

    # --- calls ------------------------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified is None:
            return updated
        if qualified in SDPA:
            if self.enabled(SDPA_NATIVE):
                self.ctx.findings.append(
                    Finding(
                        SDPA_NATIVE,
                        self.ctx.line_of(original),
                        f"scaled_dot_product_attention runs natively on NPU: left unchanged; {sdpa_path(original)}",
                        applied=False,
                    )
                )
            return updated
        module, _, name = qualified.rpartition(".")
        if module in FLASH_MODULES and name in FLASH_SPECS:
            return self._flash(original, updated, name)
        if module in FLASH_MODULES and name == "flash_attn_with_kvcache":
            self.todo(
                FLASH_KVCACHE,
                original,
                "flash_attn_with_kvcache: decoding with a KV cache maps to "
                "torch_npu.npu_fused_infer_attention_score (block_table, actual_seq_lengths); port by hand",
            )
            return updated
        if qualified in XFORMERS_FUNCTIONS:
            return self._xformers(original, updated)
        return updated

    def _flash(self, original: cst.Call, updated: cst.Call, name: str) -> cst.BaseExpression:
        spec = FLASH_SPECS[name]
        extra = (*FLASH_TAIL, "block_table") if spec.varlen else tuple(FLASH_TAIL)
        bound, problems = bind(original, spec.params, extra)
        problems.extend(self._flash_problems(bound, spec))
        if problems:
            self.todo(FLASH_UNSUPPORTED, original, f"{name} left on flash-attn: {'; '.join(problems)}")
            return updated
        window = bound.get("window_size")
        windowed = window is not None and literal(window.value) not in ((-1, -1), [-1, -1])
        rule_ = FLASH_WINDOW if windowed else FLASH_VARLEN if spec.varlen else FLASH_ATTN
        # Build from `updated`, whose arguments may carry other rules' rewrites, at the positions `bind` found.
        new_of = {id(o): u for o, u in zip(original.args, updated.args)}
        arg = {param: new_of[id(a)] for param, a in bound.items()}
        args = self._flash_tensor_args(spec, arg) + self._flash_keyword_args(original, bound, spec, windowed, new_of)
        replacement = updated.with_changes(func=cst.Name(FLASH_HELPER), args=finish_args(updated, args))
        layout = "TND" if spec.varlen else "BSND"
        return (
            self.fix(
                rule_,
                original,
                replacement,
                f"{name} -> {FLASH_HELPER} (npu_fusion_attention, {layout}"
                f"{', sliding-window band' if windowed else ''})",
                torch_npu_name=True,
            )
            or updated
        )

    @staticmethod
    def _flash_problems(bound: dict[str, cst.Arg], spec: FlashSpec) -> list[str]:
        """Why the bound arguments of a flash-attn call have no npu_fusion_attention form (none: it has one)."""
        problems: list[str] = []
        for param, default in FLASH_TAIL.items():
            if param in FORWARD_NEUTRAL and param in bound and not _pure(bound[param].value):
                problems.append(f"{param}={code_of(bound[param].value)} would be dropped with its side effects")
            elif param in bound and param not in ("window_size", *FORWARD_NEUTRAL):
                if literal(bound[param].value) != default:
                    problems.append(f"{param}={code_of(bound[param].value)} has no npu_fusion_attention mapping")
        if "block_table" in bound and literal(bound["block_table"].value) is not None:
            problems.append("a paged KV cache (block_table) needs torch_npu.npu_fused_infer_attention_score")
        if any(t not in bound for t in spec.tensors):
            problems.append("tensor arguments are missing")
        if "cu_seqlens" in bound and not isinstance(bound["cu_seqlens"].value, (cst.Name, cst.Attribute)):
            problems.append("cu_seqlens is not a plain name (the port would evaluate it twice)")
        return problems

    @staticmethod
    def _flash_tensor_args(spec: FlashSpec, arg: dict[str, cst.Arg]) -> list[cst.Arg]:
        """The tensors, positional, in the helper's order; a packed qkv or kv is unbound into its parts."""
        args: list[cst.Arg] = []
        for tensor in spec.tensors:
            positional = arg[tensor].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            args.append(unbind_arg(positional, spec.unbind) if spec.unbind and tensor in ("qkv", "kv") else positional)
        return args

    @staticmethod
    def _flash_keyword_args(
        original: cst.Call, bound: dict[str, cst.Arg], spec: FlashSpec, windowed: bool, new_of: dict[int, cst.Arg]
    ) -> list[cst.Arg]:
        """The other arguments, by keyword, in the order the user wrote them. The helper has no max_seqlen_* (it
        reads the lengths from cu_seqlens) nor block_table, and a packed call's cu_seqlens is both q's and k's."""
        args: list[cst.Arg] = []
        for a in original.args:
            param = next((p for p, b in bound.items() if b is a), None)
            if param is None or param in spec.tensors or param.startswith("max_seqlen"):
                continue
            if param in FLASH_TAIL and (param != "window_size" or not windowed):
                continue  # a literal default (anything else was refused above)
            if param == "block_table":
                continue
            if param == "cu_seqlens":
                args.append(keyword_arg("cu_seqlens_q", new_of[id(a)]))
                args.append(keyword_arg("cu_seqlens_k", new_of[id(a)]))
                continue
            args.append(keyword_arg(param, new_of[id(a)]))
        return args

    def _xformers(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = "memory_efficient_attention"
        bound, problems = bind(original, ("query", "key", "value", "attn_bias", "p", "scale"), ("op", "output_dtype"))
        if "output_dtype" in bound and literal(bound["output_dtype"].value) is not None:
            problems.append(f"output_dtype={code_of(bound['output_dtype'].value)} has no npu_fusion_attention mapping")
        if any(t not in bound for t in ("query", "key", "value")):
            problems.append("tensor arguments are missing")
        causal: str | None = None
        mask: str | None = None
        if "attn_bias" in bound and literal(bound["attn_bias"].value) is not None:
            causal = self._causal_bias(bound["attn_bias"].value)
            mask = self._attention_mask(bound["attn_bias"].value, original) if causal is None else None
            if causal is None and mask is None:
                self.todo(
                    XFORMERS_BIAS,
                    original,
                    f"{name} left on xformers: attn_bias="
                    f"{code_of(bound['attn_bias'].value)} is not an inline None/LowerTriangularMask()/"
                    "LowerTriangularFromBottomRightMask() (BlockDiagonalMask -> varlen layout TND with "
                    "cumulative sequence ends; a tensor bias -> pse, which the op adds before scaling)",
                )
                return updated
        if problems:
            self.todo(FLASH_UNSUPPORTED, original, f"{name} left on xformers: {'; '.join(problems)}")
            return updated
        new_of = {id(o): u for o, u in zip(original.args, updated.args)}
        args = [
            new_of[id(bound[t])].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            for t in ("query", "key", "value")
        ]
        for a in original.args:
            param = next((p for p, b in bound.items() if b is a), None)
            if param in ("p", "scale"):
                args.append(keyword_arg(param, new_of[id(a)]))
            elif param == "attn_bias" and mask is not None:  # (where it stood: its whitespace fits there)
                args.append(keyword_arg("mask", new_of[id(a)]))
        if causal is not None:
            args.append(cst.Arg(keyword=cst.Name("causal"), value=cst.Name("True"), equal=NO_SPACE))
        if causal == "top_left":
            args.append(cst.Arg(keyword=cst.Name("top_left"), value=cst.Name("True"), equal=NO_SPACE))
        replacement = updated.with_changes(func=cst.Name(XFORMERS_HELPER), args=finish_args(updated, args))
        how = {"top_left": ", causal top-left", "bottom_right": ", causal bottom-right"}.get(causal or "", "")
        how += f", atten_mask = {mask} < 0" if mask is not None else ""
        return (
            self.fix(
                XFORMERS,
                original,
                replacement,
                f"{name} -> {XFORMERS_HELPER} (npu_fusion_attention{how}{'; op= dropped' if 'op' in bound else ''})",
                torch_npu_name=True,
            )
            or updated
        )

    def _attention_mask(self, value: cst.BaseExpression, call: cst.Call) -> str | None:
        """The code of ``value`` (an attn_bias) where the function around ``call`` shows it to be an attention mask
        (mask_callers.attention_mask_values), else None."""
        if not _plain_reference(value):
            return None
        function = self.ctx.facts().function_at(self.ctx.line_of(call))
        if function is None:
            return None
        code = code_of(value).strip()
        values = attention_mask_values(code, function, self.ctx.module())
        if values is None or any(_makes_object(v) for v in values):
            return None  # (an xformers bias object assigned on some path: LowerTriangularMask() for is_causal)
        return code

    def _causal_bias(self, value: cst.BaseExpression) -> str | None:
        """'top_left' / 'bottom_right' for an inline `LowerTriangularMask()` / `...FromBottomRightMask()`."""
        if not isinstance(value, cst.Call) or value.args:
            return None
        qualified = self.ctx.imports.resolve(value.func) or ""
        module, _, cls = qualified.rpartition(".")
        if module not in XFORMERS_BIAS_MODULES:
            return None
        return {TOP_LEFT_MASK: "top_left", BOTTOM_RIGHT_MASK: "bottom_right"}.get(cls)

    # --- imports ----------------------------------------------------------------------------------------------

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        for alias in original.names:
            module = code_of(alias.name)
            if GPU_ATTENTION_MODULE.match(module):
                local = code_of(alias.asname.name) if alias.asname else module.split(".", 1)[0]
                self._import_todo(original, module, self._unported_uses(local))
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if original.relative or original.module is None or isinstance(original.names, cst.ImportStar):
            return updated
        module = code_of(original.module)
        if not GPU_ATTENTION_MODULE.match(module):
            return updated
        left: list[str] = []
        for alias in original.names:
            qualified = f"{module}.{code_of(alias.name)}"
            local = code_of(alias.asname.name) if alias.asname else code_of(alias.name)
            if qualified not in PORTABLE and qualified not in PORTABLE_MODULES:
                left.append(code_of(alias.name))
            elif qualified == f"{padding.MODULE}.unpad_input" and self._unported_uses(local):
                left.append("unpad_input (a result not unpacked: 4 values before flash-attn 2.7, 5 since)")
            elif self._unported_uses(local):
                left.append(f"{code_of(alias.name)} (used as a value)")
            elif not TRIGGER.search(local) and not padding.TRIGGER_RE.search(local):
                # the statements that call it are never parsed: nothing ports them
                left.append(
                    f"{code_of(alias.name)} (imported as {local}: import it under its own name to port its calls)"
                )
        self._import_todo(original, module, left)
        return updated

    def _import_todo(self, node: cst.CSTNode, module: str, left: list[str]) -> None:
        if left:
            package = module.split(".", 1)[0]
            self.todo(
                GPU_ATTENTION_IMPORT,
                node,
                f"{package} has no NPU build, so this import fails there: port "
                f"{', '.join(dict.fromkeys(left))} by hand (NPU400-NPU406 port its attention calls)",
            )

    def _unported_uses(self, local: str) -> list[str]:
        """Uses of an imported name, in the whole module, that no rule here ports: not a call of a PORTABLE name."""
        return sorted(
            {
                q.split(".", 1)[1] if "." in q else q
                for q, called in self.ctx.fact(module_uses).get(local, ())
                if not (called and q in PORTABLE)
            }
        )


def _pure(node: cst.BaseExpression) -> bool:
    """An expression whose evaluation has no side effect worth keeping: names, attributes, literals, not, and/or."""
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.UnaryOperation):
        return _pure(node.expression)
    if isinstance(node, cst.BooleanOperation):
        return _pure(node.left) and _pure(node.right)
    return False


def module_uses(facts: ModuleFacts) -> dict[str, list[tuple[str, bool]]]:
    """For each imported name of flash_attn/xformers: the qualified names of its uses and whether each is called."""
    wanted = {local: target for local, target in facts.imports.aliases.items() if GPU_ATTENTION_MODULE.match(target)}
    uses: dict[str, list[tuple[str, bool]]] = {}
    if not wanted:
        return uses
    parent_of = facts.parent
    for node in facts.nodes(ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in wanted:
            top: ast.AST = node
            attrs: list[str] = []
            while isinstance(parent := parent_of(top), ast.Attribute) and parent.value is top:
                attrs.append(parent.attr)
                top = parent
            parent = parent_of(top)
            qualified = ".".join([wanted[node.id], *attrs])
            called = isinstance(parent, ast.Call) and parent.func is top
            if called and qualified.startswith(f"{padding.MODULE}."):  # NPU410 ports some unpad_input calls only
                called = padding.ast_call_ported(qualified, parent, parent_of(parent) if parent is not None else None)
            uses.setdefault(node.id, []).append((qualified, called))
    return uses


def _makes_object(value: ast.expr) -> bool:
    """Does ``value`` construct an object of a class (a CamelCase call: xformers' `LowerTriangularMask()`,
    `BlockDiagonalMask.from_seqlens(...)`), which is no mask tensor?"""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            func = (
                node.func.value
                if isinstance(node.func, ast.Attribute) and node.func.attr.startswith("from_")
                else node.func
            )
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name[:1].isupper() and not name.isupper():
                return True
    return False
