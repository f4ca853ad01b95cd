"""The CPU references are anchored to torch's own implementations wherever the semantics coincide, and they reject
what the documented ops reject, so the equivalence tests built on them can fail for the right reasons."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import gpu_reference as gpu  # noqa: E402
import npu_reference as npu  # noqa: E402


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float32).to(dtype)


def sdpa_bsnd(q, k, v, **kwargs):
    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), **kwargs).transpose(
        1, 2
    )


def bottom_right(sq, sk):
    return torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=sk - sq)  # True = attend (SDPA polarity)


def half_sdpa_bsnd(q, k, v, **kwargs):
    """SDPA in fp32 on fp16 inputs, rounded to fp16 once: what flash-attn computes (fp16 and bf16 inputs only)."""
    return sdpa_bsnd(q.float(), k.float(), v.float(), **kwargs).half()


def test_flash_reference_matches_sdpa():
    h = torch.float16
    q, k, v = rand(2, 5, 4, 8, dtype=h, seed=1), rand(2, 7, 4, 8, dtype=h, seed=2), rand(2, 7, 4, 8, dtype=h, seed=3)
    torch.testing.assert_close(gpu.flash_attn_func(q, k, v), half_sdpa_bsnd(q, k, v))
    torch.testing.assert_close(
        gpu.flash_attn_func(q, k, v, causal=True), half_sdpa_bsnd(q, k, v, attn_mask=bottom_right(5, 7))
    )
    torch.testing.assert_close(gpu.flash_attn_func(q, k, v, softmax_scale=0.3), half_sdpa_bsnd(q, k, v, scale=0.3))
    kv = rand(2, 7, 2, 8, dtype=h, seed=4), rand(2, 7, 2, 8, dtype=h, seed=5)  # GQA: 4 query heads on 2
    torch.testing.assert_close(
        gpu.flash_attn_func(q, *kv, causal=True),
        half_sdpa_bsnd(q, *kv, attn_mask=bottom_right(5, 7), enable_gqa=True),
    )
    with pytest.raises(RuntimeError, match="fp16 and bf16"):  # as flash-attn's kernels
        gpu.flash_attn_func(q.float(), k.float(), v.float())


def test_flash_reference_window_and_varlen():
    h = torch.float16
    q, k, v = rand(1, 6, 2, 8, dtype=h, seed=1), rand(1, 6, 2, 8, dtype=h, seed=2), rand(1, 6, 2, 8, dtype=h, seed=3)
    i, j = torch.arange(6).view(6, 1), torch.arange(6).view(1, 6)
    band = (j >= i - 2) & (j <= i)
    torch.testing.assert_close(
        gpu.flash_attn_func(q, k, v, causal=True, window_size=(2, 5)), half_sdpa_bsnd(q, k, v, attn_mask=band)
    )
    cu = torch.tensor([0, 2, 6], dtype=torch.int32)
    out = gpu.flash_attn_varlen_func(q[0], k[0], v[0], cu, cu, 4, 4, causal=True)
    torch.testing.assert_close(out[2:], half_sdpa_bsnd(q[:, 2:], k[:, 2:], v[:, 2:], is_causal=True)[0])


def test_npu_reference_sparse_modes():
    q, k, v = rand(2, 3, 5, 8, seed=1), rand(2, 3, 7, 8, seed=2), rand(2, 3, 7, 8, seed=3)  # BNSD
    mask = npu.compressed_causal_mask()
    top_left = npu.npu_fusion_attention(q, k, v, 3, "BNSD", atten_mask=mask, sparse_mode=2, scale=0.25)[0]
    torch.testing.assert_close(
        top_left,
        F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(5, 7, dtype=torch.bool).tril(), scale=0.25),
    )
    bottom = npu.npu_fusion_attention(q, k, v, 3, "BNSD", atten_mask=mask, sparse_mode=3, scale=0.25)[0]
    torch.testing.assert_close(
        bottom, F.scaled_dot_product_attention(q, k, v, attn_mask=bottom_right(5, 7), scale=0.25)
    )
    explicit = torch.rand(5, 7, generator=torch.Generator().manual_seed(9)) > 0.5
    explicit[:, 0] = False
    masked = npu.npu_fusion_attention(q, k, v, 3, "BNSD", atten_mask=explicit, scale=0.25)[0]  # True = masked out
    torch.testing.assert_close(masked, F.scaled_dot_product_attention(q, k, v, attn_mask=~explicit, scale=0.25))


def test_npu_reference_default_scale_is_one():
    q, k, v = rand(1, 2, 4, 16, seed=1), rand(1, 2, 4, 16, seed=2), rand(1, 2, 4, 16, seed=3)
    torch.testing.assert_close(
        npu.npu_fusion_attention(q, k, v, 2, "BNSD")[0], F.scaled_dot_product_attention(q, k, v, scale=1.0)
    )


def test_npu_reference_tnd_is_per_sequence_bsnd():
    q, k, v = rand(9, 4, 8, seed=1), rand(12, 2, 8, seed=2), rand(12, 2, 8, seed=3)
    mask = npu.compressed_causal_mask()
    out = npu.npu_fusion_attention(
        q,
        k,
        v,
        4,
        "TND",
        atten_mask=mask,
        sparse_mode=3,
        scale=0.3,
        actual_seq_qlen=[2, 6, 9],
        actual_seq_kvlen=[3, 8, 12],
    )[0]
    for (q0, q1), (k0, k1) in zip([(0, 2), (2, 6), (6, 9)], [(0, 3), (3, 8), (8, 12)]):
        one = npu.npu_fusion_attention(
            q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], 4, "BSND", atten_mask=mask, sparse_mode=3, scale=0.3
        )[0][0]
        torch.testing.assert_close(out[q0:q1], one)


def test_npu_reference_rejects_what_the_op_rejects():
    q = rand(1, 4, 2, 8)
    with pytest.raises(AssertionError, match="compressed"):
        npu.npu_fusion_attention(
            q, q, q, 2, "BSND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool).tril(), sparse_mode=3
        )
    with pytest.raises(AssertionError, match="head_num"):
        npu.npu_fusion_attention(q, q, q, 4, "BSND")
    t = rand(4, 2, 8)
    with pytest.raises(AssertionError, match="host int lists"):
        npu.npu_fusion_attention(t, t, t, 2, "TND", actual_seq_qlen=torch.tensor([2, 4]), actual_seq_kvlen=[2, 4])
    with pytest.raises(AssertionError, match="4-D"):
        npu.npu_rotary_mul(rand(3, 4, 8), rand(1, 4, 8), rand(1, 4, 8))


def test_npu_norm_and_activation_references():
    x, w = rand(2, 3, 16, seed=1), rand(16, seed=2)
    torch.testing.assert_close(npu.npu_rms_norm(x, w, epsilon=1e-5)[0], F.rms_norm(x, (16,), w, eps=1e-5))
    torch.testing.assert_close(npu.npu_gemma_rms_norm(x, w)[0], F.rms_norm(x, (16,), 1 + w, eps=1e-6))
    a = rand(2, 3, 8, seed=3)
    torch.testing.assert_close(npu.npu_swiglu(a), F.silu(a[..., :4]) * a[..., 4:])
    x4, cos, sin = rand(2, 3, 5, 8, seed=4), rand(2, 1, 5, 8, seed=5).tanh(), rand(2, 1, 5, 8, seed=6).tanh()
    rotated = torch.cat((-x4[..., 4:], x4[..., :4]), dim=-1)
    torch.testing.assert_close(npu.npu_rotary_mul(x4, cos, sin), x4 * cos + rotated * sin)


def test_xformers_reference_alignment_and_bmk():
    q, k, v = rand(2, 3, 2, 8, seed=1), rand(2, 5, 2, 8, seed=2), rand(2, 5, 2, 8, seed=3)
    top = gpu.memory_efficient_attention(q, k, v, gpu.LowerTriangularMask())
    bottom = gpu.memory_efficient_attention(q, k, v, gpu.LowerTriangularFromBottomRightMask())
    torch.testing.assert_close(top, sdpa_bsnd(q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool).tril()))
    torch.testing.assert_close(bottom, sdpa_bsnd(q, k, v, attn_mask=bottom_right(3, 5)))
    q3, k3, v3 = (t[:, :, 0] for t in (q, k, v))
    torch.testing.assert_close(
        gpu.memory_efficient_attention(q3, k3, v3, p=0.0, scale=0.5),
        sdpa_bsnd(q[:, :, :1], k[:, :, :1], v[:, :, :1], scale=0.5)[:, :, 0],
    )
