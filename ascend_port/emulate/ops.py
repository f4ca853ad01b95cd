"""CPU references of the torch_npu (and MindIE-SD) fused ops that ascend-port emits, shared by the test suite and by
the NPU emulator's stand-in ``torch_npu``. Imports torch: only an emulated process or a test imports this module,
never the static tool.

Written from the ops' documented semantics, not from any implementation. Sources, cited per check below:

- [FA]     Ascend/op-plugin docs/en/custom_APIs/torch_npu/torch_npu-npu_fusion_attention.md (torch_npu 2.14),
           summarised in /work/shared/reference/ascend-api-facts.md §2.3.
- [RMS]    npu_rms_norm: op-plugin docs (S6) as summarised in ascend-api-facts.md §2.3.
- [ROPE]   npu_rotary_mul: ascend-api-facts.md §2.3 and the torch_npu API reference page
           hiascend.com/document/detail/zh/Pytorch/700/apiref/apilist/ptaoplist_000141.html (modes, dtypes, layouts).
- [SWIGLU] npu_swiglu: torch_npu 2.14.0 docstring, ascend-api-facts.md §2.3.
- [SMS]    npu_scaled_masked_softmax: torch_npu 2.5.1 docstring and op-plugin docs/context (dtypes, bool mask,
           H/W limits, fixed_triu_mask "当前只支持False"); the fill value -10000 from Ascend's own accuracy-checker
           reference of the op (api_accuracy_checker npu_custom_functions).
- [GEGLU]  npu_geglu: torch_npu 2.5.1 docstring (dtypes, `dim` range, halves), its schema since 2.3.1 (`activate_left`)
           and CANN's GeGluV2 docs (hicann/ops-nn activation/ge_glu_v2/README.md: which half `activate_left` picks).
- [MINDIE] MindIE-SD 3.1.0 attention_forward, ascend-api-facts.md §4.
- [REF]    a rule the earlier reference (tests/npu_reference.py) already enforced.
- [AMP]    torch_npu's autocast op lists, which follow torch's CUDA ones (issue 18's audit: layer_norm in float32).

Where the documentation constrains an argument, these references *enforce* it and raise (the real op would fail on
the device), so a port that passes something the real op rejects fails here too. A violation raises
:class:`OpContractError` (a ``ValueError``) or :class:`OpTypeError` (a ``TypeError``); both also derive from
``AssertionError``, the error the earlier references raised, so callers written against those keep working.
Features the documentation describes but these references do not compute raise ``NotImplementedError``.

Autograd: the ops with a backward on the device (npu_fusion_attention, npu_rms_norm, npu_rotary_mul, npu_swiglu,
npu_geglu)
are written with differentiable torch ops. npu_gemma_rms_norm has no backward in op-plugin (no derivatives.yaml
entry): like torch_npu, its output does not require grad, and the first call that drops a gradient warns.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from numbers import Integral, Real

import torch
import torch.nn.functional as F

__all__ = [
    "INT_MAX",
    "OpContractError",
    "OpTypeError",
    "compressed_causal_mask",
    "mindiesd_attention_forward",
    "npu_fusion_attention",
    "npu_geglu",
    "npu_gemma_rms_norm",
    "npu_rms_norm",
    "npu_rotary_mul",
    "npu_scaled_masked_softmax",
    "npu_autocast",
    "npu_swiglu",
    "NPU_AUTOCAST_FP32",
    "ROTARY_MAX_BN",
]

INT_MAX = 2147483647
FLOATS = (torch.float16, torch.bfloat16, torch.float32)
LAYOUT_RANKS = {"BSH": 3, "SBH": 3, "BSND": 4, "BNSD": 4, "TND": 3}
MAX_SEQUENCES = 1024  # [FA] actual_seq_qlen/kvlen: "≤1K entries (varlen)"
_WARNED: set[str] = set()  # ops that have warned about their missing backward (once per process)
INNER_PRECISE = (0, 1, 2)  # [FA] "当前0、1为保留配置值, 2为使能无效行计算"
note: Callable[[str], None] | None = None  # where a call's contract notes go (the emulator's report), if anywhere


class OpContractError(ValueError, AssertionError):
    """An argument value, shape or combination that the op's documentation rules out."""


class OpTypeError(TypeError, AssertionError):
    """An argument of a type or dtype that the op's documentation rules out."""


def _check(ok: object, op: str, rule: str) -> None:
    if not ok:
        raise OpContractError(f"{op}: {rule}")


def _check_type(ok: object, op: str, rule: str) -> None:
    if not ok:
        raise OpTypeError(f"{op}: {rule}")


def _is_int(value: object, scalar_tensor: bool = True) -> bool:
    """An ``int`` argument as torch's argument parser takes it: a Python or NumPy integer (not a bool) or, with
    ``scalar_tensor``, a 0-d integral tensor that does not require grad."""
    if isinstance(value, torch.Tensor):
        integral = not (value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool)
        return scalar_tensor and value.dim() == 0 and integral and not value.requires_grad
    return isinstance(value, Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    """A ``float`` argument as torch's argument parser takes it: a real number or a 0-d tensor without grad."""
    if isinstance(value, torch.Tensor):
        return value.dim() == 0 and not value.requires_grad
    return isinstance(value, Real) and not isinstance(value, bool)


def _tensors(op: str, **tensors: object) -> None:
    for name, t in tensors.items():
        _check_type(isinstance(t, torch.Tensor), op, f"{name} must be a Tensor, got {type(t).__name__}")


def _floating(op: str, **tensors: torch.Tensor) -> None:
    for name, t in tensors.items():
        _check_type(t.dtype in FLOATS, op, f"{name} dtype must be float16, bfloat16 or float32, got {t.dtype}")


# --------------------------------------------------------------------------------------------------------------------
# npu_fusion_attention


def compressed_causal_mask() -> torch.Tensor:
    # [FA] "For modes 2/3/4 the mask must be the compressed 2048x2048 upper-triangular mask" (True = masked out).
    return torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)


def _check_mask(op: str, atten_mask, mode: int, layout: str, bnss: tuple[int, int, int, int]) -> None:
    """The atten_mask rules of [FA]; ``bnss`` is (B, N, Sq, Skv) of a non-varlen call."""
    if atten_mask is None:  # [FA] "when atten_mask is None, sparse_mode, pre_tockens, next_tockens do not take effect"
        return
    _check_type(isinstance(atten_mask, torch.Tensor), op, "atten_mask must be a Tensor or None")
    # [FA] "atten_mask: bool/uint8 ... dtype bool or uint8"
    _check_type(
        atten_mask.dtype in (torch.bool, torch.uint8), op, f"atten_mask must be bool or uint8, got {atten_mask.dtype}"
    )
    if mode in (2, 3, 4):
        # [FA] "For modes 2/3/4 the mask must be the compressed 2048x2048 upper-triangular mask:
        # torch.triu(torch.ones(2048,2048), diagonal=1).bool()"
        rule = f"sparse_mode {mode} needs the compressed 2048x2048 atten_mask triu(ones(2048, 2048), diagonal=1)"
        _check(tuple(atten_mask.shape) == (2048, 2048), op, rule + f", got shape {tuple(atten_mask.shape)}")
        _check(torch.equal(atten_mask.cpu().bool(), compressed_causal_mask()), op, rule + " (True = masked out)")
        return
    if layout == "TND":
        _check(atten_mask.dim() == 2, op, "a varlen (TND) atten_mask must be 2-D (SS)")  # [FA] "varlen only SS"
        raise NotImplementedError(f"{op}: TND with sparse_mode {mode} and an atten_mask is not in this reference")
    b, n, sq, skv = bnss
    # [FA] "Shapes BNSS, B1SS, 11SS, SS"
    shapes = {(b, n, sq, skv), (b, 1, sq, skv), (1, 1, sq, skv), (sq, skv)}
    _check(
        tuple(atten_mask.shape) in shapes,
        op,
        f"atten_mask shape {tuple(atten_mask.shape)} is not one of BNSS, B1SS, 11SS, SS = {sorted(shapes, key=len)}",
    )


def _allowed(sq: int, skv: int, mode: int, atten_mask, pre: int, nxt: int) -> torch.Tensor:
    """(…, sq, skv) bool: which (query i, key j) pairs are computed; atten_mask True means masked out."""
    i = torch.arange(sq).view(sq, 1)
    j = torch.arange(skv).view(1, skv)
    if atten_mask is None:  # [FA] "当atten_mask输入为None时, sparse_mode, pre_tockens, next_tockens参数不生效"
        return torch.ones(sq, skv, dtype=torch.bool)
    if mode == 2:  # [FA] leftUpCausal: origin top-left
        return j <= i
    if mode == 3:  # [FA] rightDownCausal: origin bottom-right
        return j <= i + (skv - sq)
    if mode == 4:  # [FA] band between pre_tockens and next_tockens, origin bottom-right
        d = i + (skv - sq)
        return (j >= d - pre) & (j <= d + nxt)
    allowed = ~atten_mask.cpu().bool()
    if mode == 0:  # [FA] defaultMask: the band of pre/next_tockens (origin top-left) applies with the mask
        allowed = allowed & (j >= i - pre) & (j <= i + nxt)
    return allowed  # mode 1, allMask: the mask alone


def _note_masked_rows(op: str, allowed: torch.Tensor, inner_precise: int, auto: bool) -> None:
    """[FA] a fully masked row (a query that may attend to no key) is computed right only with inner_precise=2 (the
    "invalid row" computation, which the op enables by itself where it can tell, e.g. sparse_mode 3 with Sq > Skv);
    otherwise the docs promise no value ("精度有损失"). The reference gives such a row 0, as with inner_precise=2;
    the emulator records the call as a contract note rather than inventing the device's value."""
    if inner_precise == 2 or auto or note is None or bool(allowed.any(dim=-1).all()):
        return
    note(
        f"{op}: fully masked rows (a query attending to no key) without inner_precise=2: undefined on the device "
        "(the docs: precision loss), 0 here"
    )


def _attend(q, k, v, allowed, scale: float, keep_prob: float) -> torch.Tensor:
    """q (B, N, Sq, D), k/v (B, Nkv, Skv, D): softmax(Mask(scale * q k^T)) with dropout, computed in float32."""
    n, nkv = q.shape[1], k.shape[1]
    k = k.float().repeat_interleave(n // nkv, dim=1)  # GQA: query head h reads key/value head h // (Nq/Nkv)
    v = v.float().repeat_interleave(n // nkv, dim=1)
    scores = scale * (q.float() @ k.transpose(-1, -2))
    scores = scores.masked_fill(~allowed.to(scores.device), float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a fully masked row computes to 0 (invalid-row handling)
    if keep_prob < 1.0:
        probs = probs * (torch.rand_like(probs) < keep_prob) / keep_prob
    return (probs @ v).to(q.dtype)


def _check_scalars(op: str, head_num, input_layout, scale, keep_prob, pre_tockens, next_tockens, sparse_mode):
    """The scalar arguments' rules; returns them as Python numbers (head_num, scale, keep_prob, pre, next, mode)."""
    # [FA] signature: int head_num, str input_layout, float scale, float keep_prob, int pre/next_tockens, int sparse_mode
    _check_type(_is_int(head_num), op, f"head_num must be an int, got {type(head_num).__name__}")
    _check_type(_is_number(scale), op, f"scale must be a float, got {type(scale).__name__}")
    _check_type(_is_number(keep_prob), op, f"keep_prob must be a float, got {type(keep_prob).__name__}")
    _check_type(_is_int(pre_tockens) and _is_int(next_tockens), op, "pre_tockens and next_tockens must be ints")
    _check_type(_is_int(sparse_mode), op, f"sparse_mode must be an int, got {type(sparse_mode).__name__}")
    head_num, sparse_mode, scale, keep_prob = int(head_num), int(sparse_mode), float(scale), float(keep_prob)
    _check(1 <= head_num <= 256, op, f"head_num (the query heads) must be in 1..256, got {head_num}")  # [FA] "Nq 1~256"
    # [FA] "input_layout: BSH, SBH, BSND, BNSD, TND"
    _check(
        input_layout in LAYOUT_RANKS, op, f"input_layout must be one of {sorted(LAYOUT_RANKS)}, got {input_layout!r}"
    )
    _check(0.0 < keep_prob <= 1.0, op, f"keep_prob is in (0, 1], got {keep_prob}")  # [FA] "Dropout中1的比例 (0,1]"
    # [FA] sparse_mode 0..8 (0 defaultMask … 7/8 varlen split variants)
    _check(0 <= sparse_mode <= 8, op, f"sparse_mode must be in 0..8, got {sparse_mode}")
    if sparse_mode >= 5:
        raise NotImplementedError(f"{op}: sparse_mode {sparse_mode} (prefix / varlen split) is not in this reference")
    return head_num, scale, keep_prob, int(pre_tockens), int(next_tockens), sparse_mode


def _check_tensors(op: str, query, key, value, input_layout: str) -> None:
    _tensors(op, query=query, key=key, value=value)
    # [FA] "q/k/v/pse same dtype (fp16/bf16/fp32)"
    _check_type(
        query.dtype == key.dtype == value.dtype,
        op,
        f"query, key, value must have the same dtype, got {query.dtype}, {key.dtype}, {value.dtype}",
    )
    _floating(op, query=query)
    rank = LAYOUT_RANKS[input_layout]  # [FA] BSH/SBH/TND are 3-D, BSND/BNSD 4-D
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check(t.dim() == rank, op, f"input_layout {input_layout} needs {rank}-D {name}, got {t.dim()}-D")
    _check(
        key.shape == value.shape,
        op,
        f"key and value must have the same shape, got {tuple(key.shape)} and {tuple(value.shape)}",
    )  # [FA] "k,v same shape"


def _to_bnsd(op: str, query, key, value, head_num: int, layout: str):
    """(B, N, S, D) views of q, k, v of a non-varlen layout."""
    if layout in ("BSH", "SBH"):
        if layout == "SBH":
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        # [FA] head_num splits H: H = head_num * D for the query; the key/value heads follow from D
        _check(query.shape[2] % head_num == 0, op, f"head_num {head_num} must divide the query's H {query.shape[2]}")
        d = query.shape[2] // head_num
        _check(key.shape[2] % d == 0, op, f"the key's H {key.shape[2]} must be a multiple of head_dim {d}")
        query, key, value = (t.unflatten(2, (t.shape[2] // d, d)) for t in (query, key, value))
        layout = "BSND"
    if layout == "BSND":
        query, key, value = (t.transpose(1, 2) for t in (query, key, value))
    # [FA] "head_num: number of query heads"
    _check(
        query.shape[1] == head_num, op, f"head_num must be the number of query heads ({query.shape[1]}), got {head_num}"
    )
    _check(query.shape[0] == key.shape[0], op, f"query and key batch sizes differ: {query.shape[0]}, {key.shape[0]}")
    _check(query.shape[2] >= 1 and key.shape[2] >= 1, op, "sequence lengths must be at least 1")  # [FA] "S 1~1M"
    return query, key, value


def _check_heads(op: str, nq: int, nkv: int, dq: int, dk: int) -> None:
    # [FA] "Nq/Nkv必须是非0整数" (GQA): query heads a non-zero multiple of the key/value heads
    _check(nkv >= 1 and nq % nkv == 0, op, f"Nq/Nkv must be a non-zero integer, got Nq={nq}, Nkv={nkv}")
    # [FA] "D 1~768 with Dq=Dk≥Dv" (Dv = Dk here: key and value have the same shape)
    _check(dq == dk, op, f"the query and key head dims must be equal (Dq=Dk), got {dq} and {dk}")
    _check(1 <= dq <= 768, op, f"head dim D must be in 1..768, got {dq}")


def _seq_ends(op: str, seqs, name: str, total: int) -> list[int]:
    # [FA] "actual_seq_qlen / actual_seq_kvlen: cumulative ends (host int list) ... ≤1K entries (varlen)"
    _check(seqs is not None, op, f"input_layout TND needs {name}")
    _check_type(
        isinstance(seqs, (list, tuple)) and all(_is_int(s, scalar_tensor=False) for s in seqs),
        op,
        f"{name} must be host int lists (a list/tuple of Python ints, not a Tensor), got {type(seqs).__name__}",
    )
    _check(1 <= len(seqs) <= MAX_SEQUENCES, op, f"{name} holds 1..{MAX_SEQUENCES} sequences, got {len(seqs)}")
    _check(
        seqs[0] >= 0 and all(a <= b for a, b in zip(seqs, seqs[1:])),
        op,
        f"{name} must be cumulative (non-decreasing, non-negative) sequence ends, got {list(seqs)}",
    )
    _check(seqs[-1] == total, op, f"{name}'s cumulative ends must end at T={total}, got {seqs[-1]}")
    return [int(s) for s in seqs]


def _varlen(op, query, key, value, head_num, atten_mask, scale, keep_prob, pre, nxt, sparse_mode, qlen, kvlen, precise):
    _check(
        query.shape[1] == head_num, op, f"head_num must be the number of query heads ({query.shape[1]}), got {head_num}"
    )  # [FA] "head_num: number of query heads"
    _check_heads(op, query.shape[1], key.shape[1], query.shape[2], key.shape[2])
    _check_mask(op, atten_mask, sparse_mode, "TND", (0, 0, 0, 0))
    q_ends = _seq_ends(op, qlen, "actual_seq_qlen", query.shape[0])
    kv_ends = _seq_ends(op, kvlen, "actual_seq_kvlen", key.shape[0])
    _check(len(q_ends) == len(kv_ends), op, "actual_seq_qlen and actual_seq_kvlen must have the same length")
    outs, q0, k0 = [], 0, 0
    for q1, k1 in zip(q_ends, kv_ends):
        q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (query[q0:q1], key[k0:k1], value[k0:k1]))
        allowed = _allowed(q1 - q0, k1 - k0, sparse_mode, atten_mask, pre, nxt)
        _note_masked_rows(op, allowed, precise, sparse_mode == 3 and q1 - q0 > k1 - k0)
        outs.append(_attend(q, k, v, allowed, scale, keep_prob)[0].transpose(0, 1))
        q0, k0 = q1, k1
    return torch.cat(outs, dim=0)


def npu_fusion_attention(
    query,
    key,
    value,
    head_num,
    input_layout,
    pse=None,
    padding_mask=None,
    atten_mask=None,
    scale=1.0,
    keep_prob=1.0,
    pre_tockens=INT_MAX,
    next_tockens=INT_MAX,
    inner_precise=0,
    prefix=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    sparse_mode=0,
    gen_mask_parallel=True,
    sync=False,
    softmax_layout="",
    sink=None,
    dropout_mask=None,
    seed=0,
    offset=0,
):
    """torch_npu.npu_fusion_attention: y = Softmax(Mask(scale * q k^T, atten_mask), keep_prob) @ value.

    Note the documented default scale=1.0 (not 1/sqrt(D)); head_num is the number of query heads. Returns the
    documented 7-tuple with the attention output first (same layout and dtype as query); the softmax statistics
    (items 1-3) are None here and the dropout seed/offset/mask length 0.
    """
    op = "npu_fusion_attention"
    if any(x is not None for x in (pse, padding_mask, prefix, sink, dropout_mask)) or softmax_layout:
        raise NotImplementedError(
            f"{op}: pse, padding_mask, prefix, sink, dropout_mask and softmax_layout are not in this reference"
        )
    head_num, scale, keep_prob, pre_tockens, next_tockens, sparse_mode = _check_scalars(
        op, head_num, input_layout, scale, keep_prob, pre_tockens, next_tockens, sparse_mode
    )
    _check_type(_is_int(inner_precise), op, f"inner_precise must be an int, got {type(inner_precise).__name__}")
    inner_precise = int(inner_precise)
    _check(inner_precise in INNER_PRECISE, op, f"inner_precise must be 0, 1 or 2, got {inner_precise}")
    _check_tensors(op, query, key, value, input_layout)
    if input_layout == "TND":
        out = _varlen(
            op,
            query,
            key,
            value,
            head_num,
            atten_mask,
            scale,
            keep_prob,
            pre_tockens,
            next_tockens,
            sparse_mode,
            actual_seq_qlen,
            actual_seq_kvlen,
            inner_precise,
        )
        return out, None, None, None, 0, 0, 0
    q, k, v = _to_bnsd(op, query, key, value, head_num, input_layout)
    _check_heads(op, q.shape[1], k.shape[1], q.shape[3], k.shape[3])
    _check_mask(op, atten_mask, sparse_mode, input_layout, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
    allowed = _allowed(q.shape[2], k.shape[2], sparse_mode, atten_mask, pre_tockens, next_tockens)
    _note_masked_rows(op, allowed, inner_precise, sparse_mode == 3 and q.shape[2] > k.shape[2])
    out = _attend(q, k, v, allowed, scale, keep_prob)  # (B, N, Sq, Dv)
    if input_layout == "BSND":
        out = out.transpose(1, 2)
    elif input_layout == "BSH":
        out = out.transpose(1, 2).flatten(2)
    elif input_layout == "SBH":
        out = out.permute(2, 0, 1, 3).flatten(2)
    return out, None, None, None, 0, 0, 0


# --------------------------------------------------------------------------------------------------------------------
# RMSNorm

# [RMS] "dtypes on A2/A3: (fp16,fp32),(bf16,fp32),(fp16,fp16),(bf16,bf16),(fp32,fp32) for (x,gamma)"
RMS_NORM_DTYPES = {
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float32),
    (torch.float16, torch.float16),
    (torch.bfloat16, torch.bfloat16),
    (torch.float32, torch.float32),
}


def _check_gamma(op: str, x: torch.Tensor, gamma: torch.Tensor, epsilon) -> None:
    _check_type(_is_number(epsilon), op, f"epsilon must be a float, got {type(epsilon).__name__}")
    # [RMS] "gamma shape = trailing dims of x (usually last)"
    _check(
        1 <= gamma.dim() <= x.dim() and gamma.shape == x.shape[x.dim() - gamma.dim() :],
        op,
        f"gamma's shape {tuple(gamma.shape)} must be the trailing dims of x's {tuple(x.shape)}",
    )


def _rms(x: torch.Tensor, gamma: torch.Tensor, epsilon: float, offset: float):
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    rstd = torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + epsilon)  # [RMS] rstd: fp32, 1s on normed dims
    return (x.float() * rstd * (offset + gamma.float())).to(x.dtype), rstd


def npu_rms_norm(self, gamma, epsilon=1e-06):
    """RmsNorm(x) = x / sqrt(mean(x^2) + eps) * gamma, over gamma's (trailing) dims; returns (y, rstd)."""
    op = "npu_rms_norm"
    _tensors(op, self=self, gamma=gamma)
    _check_type(
        (self.dtype, gamma.dtype) in RMS_NORM_DTYPES,
        op,
        f"(x, gamma) dtypes ({self.dtype}, {gamma.dtype}) "
        "are not one of (fp16, fp32), (bf16, fp32), (fp16, fp16), (bf16, bf16), (fp32, fp32)",
    )
    _check(2 <= self.dim() <= 8, op, f"x must have 2 to 8 dims, got {self.dim()}")  # [RMS] "Input 2–8 dims"
    _check_gamma(op, self, gamma, epsilon)
    return _rms(self, gamma, float(epsilon), 0.0)


def npu_gemma_rms_norm(self, gamma, epsilon=1e-06):
    """GemmaRmsNorm(x) = x / sqrt(mean(x^2) + eps) * (1 + gamma); returns (y, rstd).

    No backward: op-plugin registers the forward only (op-plugin PR #2208, no derivatives.yaml entry), so, as on the
    device, the outputs do not require grad; the first call that drops a gradient warns.
    """
    op = "npu_gemma_rms_norm"
    _tensors(op, self=self, gamma=gamma)
    _check(1 <= self.dim() <= 8, op, f"x must have 1 to 8 dims, got {self.dim()}")  # [REF] 1..8 dims
    _check_gamma(op, self, gamma, epsilon)
    if torch.is_grad_enabled() and (self.requires_grad or gamma.requires_grad) and op not in _WARNED:
        _WARNED.add(op)
        warnings.warn(
            f"{op} has no backward on the NPU (no derivatives.yaml entry in op-plugin): its output does not "
            "require grad, so no gradient reaches its input or gamma",
            UserWarning,
            stacklevel=2,
        )
    with torch.no_grad():
        y, rstd = _rms(self, gamma, float(epsilon), 1.0)
    return y.detach(), rstd.detach()


# --------------------------------------------------------------------------------------------------------------------
# Rotary embedding and SwiGLU


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rotate_interleaved(x: torch.Tensor) -> torch.Tensor:
    # [ROPE] interleave: x1 = x[..., ::2]; x2 = x[..., 1::2]; rearrange(stack((-x2, x1), -1), "... d two -> ...(d two)")
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


ROTARY_MAX_BN = 1000  # [ROPE] "B,N<1000"


def _check_rotary_shapes(op: str, x: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, mode: str) -> None:
    # [ROPE] "4-D only"
    for name, t in (("input", x), ("r1", r1), ("r2", r2)):
        _check(t.dim() == 4, op, f"npu_rotary_mul takes 4-D tensors, {name} is {t.dim()}-D")
    d = x.shape[-1]
    _check(d % 2 == 0 and d < 896, op, f"head dim D must be even and < 896, got {d}")  # [ROPE] "D<896 and even"
    # [ROPE] "B,N<1000": in every layout the two dims other than S and D (BNSD, BSND: 0 and 1 or 0 and 2, SBND: 1
    # and 2) are B and N; no dim but the sequence's may reach 1000
    small = sorted(x.shape[:3])[:2]
    _check(all(n < ROTARY_MAX_BN for n in small), op, f"B and N must be below {ROTARY_MAX_BN}, got {tuple(x.shape)}")
    _check(r1.shape == r2.shape, op, f"r1 and r2 must have the same shape, got {tuple(r1.shape)}, {tuple(r2.shape)}")
    # [ROPE] r1/r2 "对应input layout": BNSD x -> 11SD, B1SD, BNSD (BSND -> 1S1D, BS1D, BSND; SBND -> S11D, SB1D,
    # SBND): every dim of r1 is 1 or x's, the last one D
    _check(
        r1.shape[-1] == d and all(r in (1, n) for r, n in zip(r1.shape, x.shape)),
        op,
        f"r1/r2 of shape {tuple(r1.shape)} do not broadcast to input {tuple(x.shape)} (each dim 1 or the input's, "
        "the last D)",
    )
    if mode == "interleave":  # [ROPE] "(interleave: 11SD only)": one sequence dim, the others 1
        _check(
            sum(r != 1 for r in r1.shape[:3]) <= 1,
            op,
            f"interleave mode takes r1/r2 of shape 11SD (1S1D, S11D), got {tuple(r1.shape)}",
        )


def npu_rotary_mul(input, r1, r2, rotary_mode="half", rotate=None):
    """half mode: x1, x2 = chunk(x, 2, -1); out = r1 * x + r2 * cat(-x2, x1). interleave mode: the rotation pairs
    adjacent elements (GPT-J). 4-D inputs only, D even."""
    op = "npu_rotary_mul"
    if rotate is not None:
        raise NotImplementedError(f"{op}: the rotate tensor is not in this reference")
    # [ROPE] "rotary_mode: 支持“half”、“interleave”两种模式"
    _check(
        rotary_mode in ("half", "interleave"), op, f"rotary_mode must be 'half' or 'interleave', got {rotary_mode!r}"
    )
    _tensors(op, input=input, r1=r1, r2=r2)
    _floating(op, input=input)  # [ROPE] "数据类型float16,bfloat16,float32"
    _floating(op, r1=r1, r2=r2)
    _check_rotary_shapes(op, input, r1, r2, rotary_mode)
    # r1/r2 may hold any values: the kernel multiplies by them (YaRN's mscale and LongRoPE's attention factor scale
    # the cos/sin tables above 1, and the real op takes them)
    # Mixed dtypes (a bf16 input under autocast with fp32 tables) are accepted: the op casts r1 and r2 to the
    # input's dtype and returns the input's dtype (op-plugin op_plugin/ops/opapi/RotaryMulKernelNpuOpApi.cpp,
    # isRotaryMulMixDtypeSupport), where the eager expression would have promoted to fp32.
    r1, r2 = r1.to(input.dtype), r2.to(input.dtype)
    x = input.float()
    rotated = _rotate_half(x) if rotary_mode == "half" else _rotate_interleaved(x)
    return (r1.float() * x + r2.float() * rotated).to(input.dtype)


def npu_swiglu(self, dim=-1):
    """Split x in two halves A, B along dim: out = A * sigmoid(A) * B (silu of the *first* half)."""
    op = "npu_swiglu"
    _tensors(op, self=self)
    _floating(op, self=self)  # [SWIGLU] "fp32/fp16/bf16"
    _check(1 <= self.dim() <= 8, op, f"x must have 1 to 8 dims, got {self.dim()}")  # [SWIGLU] "1–8 dims"
    _check_type(_is_int(dim), op, f"dim must be an int, got {type(dim).__name__}")
    dim = int(dim)
    _check(-self.dim() <= dim < self.dim(), op, f"dim {dim} is out of range for a {self.dim()}-D input")
    # [SWIGLU] "A, B = split x in half along dim": the split dim has an even size
    _check(self.shape[dim] % 2 == 0, op, f"the split dim {dim} must have an even size, got {self.shape[dim]}")
    a, b = self.float().chunk(2, dim=dim)
    return (F.silu(a) * b).to(self.dtype)


GEGLU_APPROXIMATE = {0: "none", 1: "tanh"}  # [GEGLU] "0表示使用none，1表示使用tanh"


def npu_geglu(self, dim=-1, approximate=1, activate_left=False):
    """Split x in two halves A, B along dim: (A * gelu(B), gelu(B)), or with activate_left (gelu(A) * B, gelu(A))."""
    op = "npu_geglu"
    _tensors(op, self=self)
    _floating(op, self=self)  # [GEGLU] "FLOAT32、FLOAT16、BFLOAT16"
    _check_type(_is_int(dim), op, f"dim must be an int, got {type(dim).__name__}")
    _check_type(_is_int(approximate), op, f"approximate must be an int, got {type(approximate).__name__}")
    _check_type(isinstance(activate_left, bool), op, f"activate_left must be a bool, got {activate_left!r}")
    dim, approximate = int(dim), int(approximate)
    # [GEGLU] "当self.dim()>0时，取值在[-self.dim(), self.dim()-1]范围内" (a 0-d tensor has no halves to split)
    _check(self.dim() > 0, op, "x must have at least 1 dim")
    _check(-self.dim() <= dim < self.dim(), op, f"dim {dim} is out of range for a {self.dim()}-D input")
    _check(approximate in GEGLU_APPROXIMATE, op, f"approximate must be 0 (none) or 1 (tanh), got {approximate}")
    # [GEGLU] "out、outGelu在dim维的size等于self在dim维size的1/2": the split dim has an even size
    _check(self.shape[dim] % 2 == 0, op, f"the split dim {dim} must have an even size, got {self.shape[dim]}")
    a, b = self.float().chunk(2, dim=dim)
    gate, other = (a, b) if activate_left else (b, a)  # [GEGLU] activateLeft false: "对self的右半部分做activate"
    gelu = F.gelu(gate, approximate=GEGLU_APPROXIMATE[approximate])
    return (gelu * other).to(self.dtype), gelu.to(self.dtype)


SMS_AXIS = (32, 4096)  # [SMS] "H和W轴长度大于等于32、小于等于4096、且能被32整除"
SMS_FILL = -10000.0  # [SMS] Ascend's reference: (x * scale).masked_fill(mask, value=-10000)


def npu_scaled_masked_softmax(x, mask, scale=1.0, fixed_triu_mask=False):
    """softmax(x * scale, masked where mask is True) over the last axis, in float32, returned in x's dtype."""
    op = "npu_scaled_masked_softmax"
    _tensors(op, x=x, mask=mask)
    _floating(op, x=x)  # [SMS] "float16、float32、bfloat16"
    _check_type(mask.dtype == torch.bool, op, f"mask must be bool, got {mask.dtype}")  # [SMS] "mask ... bool"
    _check_type(_is_number(scale), op, f"scale must be a number, got {type(scale).__name__}")
    if fixed_triu_mask:  # [SMS] "为预留参数，功能未完成，当前只支持False"
        raise NotImplementedError(f"{op}: fixed_triu_mask=True is not supported (reserved, False only)")
    _check(2 <= x.dim() <= 4, op, f"x must convert to NCHW (2 to 4 dims), got {x.dim()}")
    for axis, size in (("H", x.shape[-2]), ("W", x.shape[-1])):
        low, high = SMS_AXIS
        _check(low <= size <= high and size % 32 == 0, op, f"{axis} must be 32..4096 and a multiple of 32, got {size}")
    try:  # [SMS] "输入mask的shape，必须能被broadcast成x的shape"
        _check(torch.broadcast_shapes(mask.shape, x.shape) == x.shape, op, "mask must broadcast to x's shape")
    except RuntimeError:
        _check(False, op, f"mask {tuple(mask.shape)} must broadcast to x {tuple(x.shape)}")
    scores = (x.float() * float(scale)).masked_fill(mask, SMS_FILL)
    return torch.softmax(scores, dim=-1).to(x.dtype)


# --------------------------------------------------------------------------------------------------------------------
# Autocast on the NPU
#
# [AMP] torch_npu's autocast follows torch's CUDA lists: conv/matmul/linear run in the autocast dtype; layer_norm,
# group_norm, pow, rsqrt, the losses (and softmax, to a float32 output) in float32, so `F.layer_norm(bf16 x)` under
# `torch.autocast("npu")` returns float32 (CPU autocast keeps it in bf16). Only layer_norm is emulated below.

NPU_AUTOCAST_FP32 = frozenset({"layer_norm", "group_norm", "pow", "rsqrt", "mse_loss", "nll_loss", "softmax"})


@contextlib.contextmanager
def npu_autocast(dtype: torch.dtype = torch.bfloat16):
    """``torch.autocast("npu", dtype)`` on CPU: CPU autocast for the lower-precision list (linear, matmul), and
    torch.nn.functional.layer_norm in float32 as torch_npu's fp32 list has it (nn.LayerNorm calls it too)."""
    original = F.layer_norm

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
        if not torch.is_autocast_enabled("cpu"):
            return original(input, normalized_shape, weight, bias, eps)
        with torch.autocast("cpu", enabled=False):
            up = [t.float() if t is not None and t.is_floating_point() else t for t in (input, weight, bias)]
            return original(up[0], normalized_shape, up[1], up[2], eps)

    F.layer_norm = layer_norm
    try:
        with torch.autocast("cpu", dtype=dtype):
            yield
    finally:
        F.layer_norm = original


# --------------------------------------------------------------------------------------------------------------------
# MindIE-SD

MINDIESD_OPTIONS = {  # [MINDIE] opt_mode, op_type (with opt_mode='manual') and layout values
    "opt_mode": ("runtime", "static", "manual"),
    "op_type": ("prompt_flash_attn", "fused_attn_score", "ascend_laser_attention"),
    "layout": ("BNSD", "BSND", "BSH"),
}


def mindiesd_attention_forward(query, key, value, attn_mask=None, scale=None, fused=True, head_first=False, **kwargs):
    """MindIE-SD attention_forward: BSND (head_first=False) or BNSD; scale default head_dim ** -0.5; attn_mask in
    SDPA polarity (True = attend)."""
    op = "mindiesd attention_forward"
    _tensors(op, query=query, key=key, value=value)
    for name, allowed in MINDIESD_OPTIONS.items():
        if name in kwargs:
            _check(kwargs[name] in allowed, op, f"{name} must be one of {allowed}, got {kwargs[name]!r}")
    for name, t in (("query", query), ("key", key), ("value", value)):  # [MINDIE] "4-D BSND or BNSD"
        _check(t.dim() == 4, op, f"takes 4-D (BSND or BNSD) tensors, {name} is {t.dim()}-D")
    n_dim = 1 if head_first else 2
    _check(
        key.shape[n_dim] == query.shape[n_dim],
        op,  # [REF] query and key with the same head count
        f"query and key must have the same head count, got {query.shape[n_dim]} and {key.shape[n_dim]}",
    )
    q, k, v = (query, key, value) if head_first else (t.transpose(1, 2) for t in (query, key, value))
    scale = query.shape[-1] ** -0.5 if scale is None else scale  # [MINDIE] "scale default head_dim**-0.5"
    allowed = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool) if attn_mask is None else attn_mask.bool()
    out = _attend(q, k, v, allowed, float(scale), 1.0)
    return out if head_first else out.transpose(1, 2)
