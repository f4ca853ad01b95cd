"""CPU reference implementations of the torch_npu (and MindIE-SD) ops that ascend-port emits. Test code only.

Written from the ops' documented semantics, not from any implementation: Ascend/op-plugin
docs/en/custom_APIs/torch_npu/torch_npu-npu_fusion_attention.md (torch_npu 2.14), the npu_rms_norm /
npu_gemma_rms_norm / npu_rotary_mul / npu_swiglu docstrings of torch_npu 2.14.0, and MindIE-SD 3.1.0's
attention_forward (summarised in /work/shared/reference/ascend-api-facts.md §2.3 and §4). Where the documentation
constrains an argument (mask polarity and shape, host lists for varlen, 4-D rotary inputs) these references
*enforce* it, so a port that passes something the real op would reject fails the tests.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

INT_MAX = 2147483647


def compressed_causal_mask() -> torch.Tensor:
    # "For modes 2/3/4 the mask must be the compressed 2048x2048 upper-triangular mask" (True = masked out).
    return torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)


def _allowed(sq: int, skv: int, mode: int, atten_mask, pre: int, nxt: int) -> torch.Tensor:
    """(…, sq, skv) bool: which (query i, key j) pairs are computed; atten_mask True means masked out."""
    i = torch.arange(sq).view(sq, 1)
    j = torch.arange(skv).view(1, skv)
    if atten_mask is None:  # "when atten_mask is None, sparse_mode, pre_tockens and next_tockens do not take effect"
        return torch.ones(sq, skv, dtype=torch.bool)
    if mode in (2, 3, 4):
        mask = atten_mask.cpu()
        assert mask.shape == (2048, 2048) and mask.dtype in (torch.bool, torch.uint8), "modes 2-4 need the 2048 mask"
        assert torch.equal(mask.bool(), compressed_causal_mask()), "modes 2-4 need the compressed triu(…, 1) mask"
    if mode == 2:  # leftUpCausal: origin top-left
        return j <= i
    if mode == 3:  # rightDownCausal: origin bottom-right
        return j <= i + (skv - sq)
    if mode == 4:  # band between pre_tockens and next_tockens, origin bottom-right
        d = i + (skv - sq)
        return (j >= d - pre) & (j <= d + nxt)
    if mode in (0, 1):
        allowed = ~atten_mask.cpu().bool()
        if mode == 0:  # defaultMask: the band of pre/next_tockens (origin top-left) applies with the mask
            allowed = allowed & (j >= i - pre) & (j <= i + nxt)
        return allowed
    raise NotImplementedError(f"sparse_mode {mode} is not in this reference")


def _attend(q, k, v, allowed, scale: float, keep_prob: float) -> torch.Tensor:
    """q (B, N, Sq, D), k/v (B, Nkv, Skv, D): softmax(Mask(scale * q k^T)) with dropout, computed in float32."""
    n, nkv = q.shape[1], k.shape[1]
    assert n % nkv == 0, "Nq/Nkv must be a non-zero integer"
    k = k.float().repeat_interleave(n // nkv, dim=1)  # GQA: query head h reads key/value head h // (Nq/Nkv)
    v = v.float().repeat_interleave(n // nkv, dim=1)
    scores = scale * (q.float() @ k.transpose(-1, -2))
    scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a fully masked row computes to 0 (invalid-row handling)
    if keep_prob < 1.0:
        probs = probs * (torch.rand_like(probs) < keep_prob) / keep_prob
    return (probs @ v).to(q.dtype)


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
):
    """torch_npu.npu_fusion_attention: y = Softmax(Mask(scale * q k^T, atten_mask), keep_prob) @ value.

    Note the documented default scale=1.0 (not 1/sqrt(D)); head_num is the number of query heads.
    """
    if pse is not None or padding_mask is not None or prefix is not None:
        raise NotImplementedError("pse, padding_mask and prefix are not in this reference")
    assert query.dtype == key.dtype == value.dtype, "query, key, value must have the same dtype"
    assert key.shape == value.shape, "key and value must have the same shape"
    assert 0.0 < keep_prob <= 1.0, "keep_prob is in (0, 1]"
    assert isinstance(head_num, int) and isinstance(scale, (int, float)) and not isinstance(scale, bool)
    if input_layout == "TND":
        for seqs in (actual_seq_qlen, actual_seq_kvlen):
            assert isinstance(seqs, (list, tuple)) and all(type(s) is int for s in seqs), "host int lists"
        assert len(actual_seq_qlen) == len(actual_seq_kvlen)
        assert actual_seq_qlen[-1] == query.shape[0] and actual_seq_kvlen[-1] == key.shape[0], "cumulative ends"
        assert query.shape[1] == head_num
        out = torch.zeros(query.shape[0], query.shape[1], value.shape[2], dtype=query.dtype)
        q0 = k0 = 0
        for q1, k1 in zip(actual_seq_qlen, actual_seq_kvlen):
            q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (query[q0:q1], key[k0:k1], value[k0:k1]))
            allowed = _allowed(q1 - q0, k1 - k0, sparse_mode, atten_mask, pre_tockens, next_tockens)
            out[q0:q1] = _attend(q, k, v, allowed, scale, keep_prob)[0].transpose(0, 1)
            q0, k0 = q1, k1
        return out, None, None, None, 0, 0, 0
    if input_layout == "BSND":
        q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    elif input_layout == "BNSD":
        q, k, v = query, key, value
    else:
        raise NotImplementedError(f"layout {input_layout} is not in this reference")
    assert q.dim() == 4 and q.shape[1] == head_num, "head_num must be the number of query heads"
    allowed = _allowed(q.shape[2], k.shape[2], sparse_mode, atten_mask, pre_tockens, next_tockens)
    out = _attend(q, k, v, allowed, scale, keep_prob)
    return (out.transpose(1, 2) if input_layout == "BSND" else out), None, None, None, 0, 0, 0


def _rms(x: torch.Tensor, gamma: torch.Tensor, epsilon: float, offset: float):
    assert 1 <= x.dim() <= 8 and gamma.shape == x.shape[x.dim() - gamma.dim() :], "gamma: trailing dims of x"
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    rstd = torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + epsilon)
    return (x.float() * rstd * (offset + gamma.float())).to(x.dtype), rstd


def npu_rms_norm(self, gamma, epsilon=1e-06):
    """RmsNorm(x) = x / sqrt(mean(x^2) + eps) * gamma, over gamma's (trailing) dims; returns (y, rstd)."""
    return _rms(self, gamma, epsilon, 0.0)


def npu_gemma_rms_norm(self, gamma, epsilon=1e-06):
    """GemmaRmsNorm(x) = x / sqrt(mean(x^2) + eps) * (1 + gamma); returns (y, rstd)."""
    return _rms(self, gamma, epsilon, 1.0)


def npu_rotary_mul(input, r1, r2, rotary_mode="half", rotate=None):
    """half mode: x1, x2 = chunk(x, 2, -1); out = r1 * x + r2 * cat(-x2, x1). 4-D inputs only, D even."""
    assert rotary_mode == "half" and rotate is None, "only the half mode is in this reference"
    assert input.dim() == 4 and r1.dim() == 4 and r2.dim() == 4, "npu_rotary_mul takes 4-D tensors"
    assert r1.shape == r2.shape and input.shape[-1] % 2 == 0 and input.shape[-1] < 896
    assert r1.dtype == input.dtype == r2.dtype
    torch.broadcast_shapes(r1.shape, input.shape)
    x = input.float()
    x1, x2 = x.chunk(2, dim=-1)
    return (r1.float() * x + r2.float() * torch.cat((-x2, x1), dim=-1)).to(input.dtype)


def npu_swiglu(self, dim=-1):
    """Split x in two halves A, B along dim: out = A * sigmoid(A) * B (silu of the *first* half)."""
    assert self.shape[dim] % 2 == 0
    a, b = self.float().chunk(2, dim=dim)
    return (F.silu(a) * b).to(self.dtype)


def mindiesd_attention_forward(query, key, value, attn_mask=None, scale=None, fused=True, head_first=False, **kwargs):
    """MindIE-SD attention_forward: BSND (head_first=False) or BNSD; scale default head_dim ** -0.5; attn_mask in
    SDPA polarity (True = attend)."""
    assert query.dim() == 4 and key.shape[-2 if not head_first else 1] == query.shape[-2 if not head_first else 1]
    q, k, v = (query, key, value) if head_first else (t.transpose(1, 2) for t in (query, key, value))
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    allowed = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool) if attn_mask is None else attn_mask.bool()
    out = _attend(q, k, v, allowed, float(scale), 1.0)
    return out if head_first else out.transpose(1, 2)
