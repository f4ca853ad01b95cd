"""CPU reference implementations of the GPU-only functions ascend-port replaces: flash-attn 2.x, xformers'
memory_efficient_attention and apex's fused norms. Test code only.

Written from their documented semantics: flash_attn/flash_attn_interface.py docstrings (flash-attn >= 2.1: "If
causal=True, the causal mask is aligned to the bottom right corner of the attention matrix"; sliding window: query
i attends keys [i + seqlen_k - seqlen_q - window_size[0], i + seqlen_k - seqlen_q + window_size[1]]; MQA/GQA: "If
Q has 6 heads and K, V have 2 heads, head 0, 1, 2 of Q will attention to head 0 of K, V"; default softmax_scale
1/sqrt(headdim); "If the row of the mask is all zero, the output will be zero"), xformers.ops.fmha docs (BMHK
layout, scale default q.shape[-1] ** -0.5, LowerTriangularMask vs LowerTriangularFromBottomRightMask alignment, a
tensor bias added to the scaled scores), and apex.normalization (eps default 1e-5).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

# flash-attn's kernels take fp16 and bf16 only ("FlashAttention only support fp16 and bf16 data type"): so do these
# references, so that no equivalence test can compare a port against an original that could not run.


@contextlib.contextmanager
def strict_dtypes():
    """Kept for the tests written while the check was opt-in: the references are always strict now."""
    yield


def _check_dtype(q) -> None:
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError("FlashAttention only support fp16 and bf16 data type")


def _attention(q, k, v, scale, allowed, dropout_p, bias=None):
    """q (B, Sq, H, D), k/v (B, Sk, Hk, D) -> (B, Sq, H, D); computed in float32, returned in q's dtype."""
    h, hk = q.shape[2], k.shape[2]
    assert h % hk == 0
    q32, k32, v32 = (t.float().transpose(1, 2) for t in (q, k, v))
    k32, v32 = k32.repeat_interleave(h // hk, dim=1), v32.repeat_interleave(h // hk, dim=1)
    scores = scale * (q32 @ k32.transpose(-1, -2))
    if bias is not None:
        scores = scores + bias.float()
    scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    if dropout_p > 0.0:
        probs = F.dropout(probs, dropout_p)
    return (probs @ v32).transpose(1, 2).to(q.dtype)


def _window(sq: int, sk: int, causal: bool, window_size) -> torch.Tensor:
    left, right = window_size
    if causal:
        right = 0
    i = torch.arange(sq).view(sq, 1) + (sk - sq)  # bottom-right alignment
    j = torch.arange(sk).view(1, sk)
    allowed = torch.ones(sq, sk, dtype=torch.bool)
    if left >= 0:
        allowed &= j >= i - left
    if right >= 0:
        allowed &= j <= i + right
    return allowed


def flash_attn_func(
    q,
    k,
    v,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    alibi_slopes=None,
    deterministic=False,
    return_attn_probs=False,
):
    if softcap or alibi_slopes is not None or return_attn_probs:
        raise NotImplementedError("softcap, alibi_slopes and return_attn_probs are not in this reference")
    assert q.dim() == 4
    _check_dtype(q)
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    return _attention(q, k, v, scale, _window(q.shape[1], k.shape[1], causal, window_size), dropout_p)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, **kwargs):
    return flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], dropout_p, softmax_scale, causal, **kwargs)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, **kwargs):
    return flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale, causal, **kwargs)


def flash_attn_varlen_func(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q,
    max_seqlen_k,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    alibi_slopes=None,
    deterministic=False,
    return_attn_probs=False,
    block_table=None,
):
    """q (total_q, H, D), k/v (total_k, Hk, D); cu_seqlens: (batch + 1,) int32 cumulative offsets from 0."""
    assert cu_seqlens_q.dtype == torch.int32 and cu_seqlens_k.dtype == torch.int32 and block_table is None
    _check_dtype(q)
    assert max_seqlen_q >= int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    out = torch.empty(q.shape[0], q.shape[1], v.shape[2], dtype=q.dtype)
    for b in range(len(cu_seqlens_q) - 1):
        q0, q1, k0, k1 = (int(x) for x in (cu_seqlens_q[b], cu_seqlens_q[b + 1], cu_seqlens_k[b], cu_seqlens_k[b + 1]))
        out[q0:q1] = flash_attn_func(
            q[None, q0:q1],
            k[None, k0:k1],
            v[None, k0:k1],
            dropout_p,
            softmax_scale,
            causal,
            window_size,
            softcap,
            alibi_slopes,
            deterministic,
            return_attn_probs,
        )[0]
    return out


def flash_attn_varlen_qkvpacked_func(
    qkv, cu_seqlens, max_seqlen, dropout_p=0.0, softmax_scale=None, causal=False, **kwargs
):
    return flash_attn_varlen_func(
        qkv[:, 0],
        qkv[:, 1],
        qkv[:, 2],
        cu_seqlens,
        cu_seqlens,
        max_seqlen,
        max_seqlen,
        dropout_p,
        softmax_scale,
        causal,
        **kwargs,
    )


def flash_attn_varlen_kvpacked_func(
    q,
    kv,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q,
    max_seqlen_k,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    **kwargs,
):
    return flash_attn_varlen_func(
        q,
        kv[:, 0],
        kv[:, 1],
        cu_seqlens_q,
        cu_seqlens_k,
        max_seqlen_q,
        max_seqlen_k,
        dropout_p,
        softmax_scale,
        causal,
        **kwargs,
    )


def flash_attn_with_kvcache(*args, **kwargs):
    raise NotImplementedError("not in this reference")


# flash_attn.bert_padding (its docstrings: unpad_input returns the selected tokens, their indices in the flattened
# (batch, seqlen) axes, the int32 cumulative lengths with a leading 0 and the longest length, plus, since 2.7, the
# used lengths; pad_input scatters back to (batch, seqlen, ...) with zeros). The fake flash_attn's release:
FLASH_ATTN_VERSION = "2.5.9"  # below 2.6 (softcap) and 2.7 (unpad_input's fifth value); specs may raise it


def index_first_axis(x, indices):
    flat = x.reshape(x.shape[0], -1)
    return torch.gather(flat, 0, indices[:, None].expand(-1, flat.shape[1])).reshape(-1, *x.shape[1:])


def index_put_first_axis(values, indices, first_axis_dim):
    out = torch.zeros(first_axis_dim, values[0].numel(), dtype=values.dtype, device=values.device)
    out = out.scatter(0, indices[:, None].expand(-1, out.shape[1]), values.reshape(len(indices), -1))
    return out.reshape(first_axis_dim, *values.shape[1:])


class IndexFirstAxis:
    apply = staticmethod(index_first_axis)


class IndexPutFirstAxis:
    apply = staticmethod(index_put_first_axis)


def unpad_input(hidden_states, attention_mask, unused_mask=None):
    every = attention_mask if unused_mask is None else attention_mask + unused_mask
    lengths = every.sum(-1).to(torch.int32)
    indices = every.reshape(-1).nonzero().reshape(-1)
    zero = torch.zeros(1, dtype=torch.int32, device=lengths.device)
    cu_seqlens = torch.cat([zero, lengths.cumsum(0).to(torch.int32)])
    tokens = index_first_axis(hidden_states.reshape(-1, *hidden_states.shape[2:]), indices)
    out = (tokens, indices, cu_seqlens, int(lengths.max()))
    five = tuple(int(p) for p in FLASH_ATTN_VERSION.split(".")[:2]) >= (2, 7)
    return (*out, attention_mask.sum(-1).to(torch.int32)) if five else out


def unpad_input_for_concatenated_sequences(*args, **kwargs):
    raise NotImplementedError("not in this reference")


def pad_input(hidden_states, indices, batch, seqlen):
    return index_put_first_axis(hidden_states, indices, batch * seqlen).reshape(batch, seqlen, *hidden_states.shape[1:])


class LowerTriangularMask:
    """xformers: causal, query i attends keys j <= i (top-left aligned)."""


class LowerTriangularFromBottomRightMask:
    """xformers: causal shifted so that the last query attends the last key (bottom-right aligned)."""


class BlockDiagonalMask:
    @classmethod
    def from_seqlens(cls, *args, **kwargs):
        raise NotImplementedError("not in this reference")


def memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None, *, op=None, output_dtype=None):
    """BMHK (or BMK: one head) inputs; softmax(q k^T * scale + bias) v with dropout p."""
    three_d = query.dim() == 3
    if three_d:
        query, key, value = (t.unsqueeze(2) for t in (query, key, value))
    assert query.shape[2] == key.shape[2], "BMHK takes the same number of heads for q and k"
    sq, sk = query.shape[1], key.shape[1]
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    i, j = torch.arange(sq).view(sq, 1), torch.arange(sk).view(1, sk)
    bias = None
    if attn_bias is None:
        allowed = torch.ones(sq, sk, dtype=torch.bool)
    elif isinstance(attn_bias, LowerTriangularMask):
        allowed = j <= i
    elif isinstance(attn_bias, LowerTriangularFromBottomRightMask):
        allowed = j <= i + (sk - sq)
    elif isinstance(attn_bias, torch.Tensor):  # (B, H, Mq, Mk); BMK inputs: (B, Mq, Mk)
        allowed, bias = torch.ones(sq, sk, dtype=torch.bool), attn_bias.unsqueeze(1) if three_d else attn_bias
    else:
        raise NotImplementedError(f"attn_bias {type(attn_bias).__name__} is not in this reference")
    out = _attention(query, key, value, scale, allowed, p, bias)
    return out.squeeze(2) if three_d else out


def _apex_autocast(*tensors):
    """apex.normalization's `_cast_if_autocast_enabled`: under autocast the fused norms cast their input, weight and
    bias to the autocast dtype and run with autocast off, so they return that dtype (torch's layer_norm, on the
    autocast fp32 list of CUDA and torch_npu, returns float32 there)."""
    device = next(t.device.type for t in tensors if t is not None)
    if not torch.is_autocast_enabled(device):
        return tensors
    dtype = torch.get_autocast_dtype(device)
    return tuple(t.to(dtype) if t is not None and t.is_floating_point() else t for t in tensors)


class FusedRMSNorm(torch.nn.Module):
    """apex.normalization.FusedRMSNorm: x / sqrt(mean(x^2) + eps) * weight over normalized_shape; eps 1e-5. The
    kernel accumulates in float32 and returns the input's dtype (after apex's autocast cast)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, memory_efficient=False):
        super().__init__()
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(self.shape)) if elementwise_affine else None

    def forward(self, x):
        x, weight = _apex_autocast(x, self.weight)
        with torch.autocast(x.device.type, enabled=False):
            dims = tuple(range(-len(self.shape), 0))
            y = x.float() * torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + self.eps)
            return (y * weight.float() if weight is not None else y).to(x.dtype)


class FusedLayerNorm(torch.nn.Module):
    """apex.normalization.FusedLayerNorm: layer norm over normalized_shape; eps 1e-5. The kernel accumulates in
    float32 and returns the input's dtype (after apex's autocast cast), whatever the weight's dtype."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, memory_efficient=False):
        super().__init__()
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(self.shape)) if elementwise_affine else None
        self.bias = torch.nn.Parameter(torch.zeros(self.shape)) if elementwise_affine else None

    def forward(self, x):
        x, weight, bias = _apex_autocast(x, self.weight, self.bias)
        with torch.autocast(x.device.type, enabled=False):
            w, b = (t.float() if t is not None else None for t in (weight, bias))
            return F.layer_norm(x.float(), self.shape, w, b, self.eps).to(x.dtype)
