"""ascend_port/emulate/ops.py: each CPU reference of a torch_npu fused op computes its documented formula (forward,
and backward where the device op has one) and refuses each call its documentation rules out."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import npu_reference  # noqa: E402

from ascend_port.emulate import ops  # noqa: E402
from ascend_port.emulate.ops import OpContractError, OpTypeError  # noqa: E402


def rand(*shape, dtype=torch.float32, seed=0, grad=False):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)
    return t.requires_grad_() if grad else t


def table(*shape, seed=0, grad=False):
    """A rotary table's values (cos/sin: in [-1, 1])."""
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).tanh()
    return t.requires_grad_() if grad else t


def bottom_right(sq, sk):
    return torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=sk - sq)  # True = attend (SDPA polarity)


def sdpa_bnsd(q, k, v, **kwargs):
    """The plain formula: softmax(scale q k^T + mask) v, key/value heads repeated for GQA."""
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v, **kwargs)


def grads(out, *inputs):
    return torch.autograd.grad(out, inputs, torch.ones_like(out))


def fa(q, k, v, head_num, layout, **kwargs):
    return ops.npu_fusion_attention(q, k, v, head_num, layout, **kwargs)[0]


MASK = ops.compressed_causal_mask()


def test_tests_reference_module_reexports_the_emulator_ops():
    for name in npu_reference.__all__:
        assert getattr(npu_reference, name) is getattr(ops, name)
    assert set(npu_reference.__all__) == set(ops.__all__)
    assert issubclass(OpContractError, ValueError) and issubclass(OpTypeError, TypeError)
    assert issubclass(OpContractError, AssertionError) and issubclass(OpTypeError, AssertionError)  # old callers


# ---------------------------------------------------------------------------------------------------------------------
# npu_fusion_attention: correct calls


@pytest.mark.parametrize("layout", ["BNSD", "BSND", "BSH", "SBH"])
def test_fusion_attention_layouts_match_sdpa_with_gqa(layout):
    q, k, v = rand(2, 4, 5, 8, seed=1), rand(2, 2, 7, 8, seed=2), rand(2, 2, 7, 8, seed=3)  # BNSD, 4 heads on 2
    expected = sdpa_bnsd(q, k, v, attn_mask=bottom_right(5, 7), scale=0.3)
    to = {
        "BNSD": lambda t: t,
        "BSND": lambda t: t.transpose(1, 2),
        "BSH": lambda t: t.transpose(1, 2).flatten(2),
        "SBH": lambda t: t.permute(2, 0, 1, 3).flatten(2),
    }[layout]
    out = fa(to(q), to(k), to(v), 4, layout, atten_mask=MASK, sparse_mode=3, scale=0.3)
    torch.testing.assert_close(out, to(expected))


def test_fusion_attention_backward_matches_the_formula():
    q, k, v = (
        rand(2, 5, 4, 8, seed=1, grad=True),
        rand(2, 7, 2, 8, seed=2, grad=True),
        rand(2, 7, 2, 8, seed=3, grad=True),
    )
    out = fa(q, k, v, 4, "BSND", atten_mask=MASK, sparse_mode=3, scale=0.3)
    t = [x.detach().transpose(1, 2).requires_grad_() for x in (q, k, v)]
    expected = sdpa_bnsd(*t, attn_mask=bottom_right(5, 7), scale=0.3).transpose(1, 2)
    torch.testing.assert_close(out, expected)
    for got, want in zip(grads(out, q, k, v), grads(expected, *t)):
        torch.testing.assert_close(got, want.transpose(1, 2))


def test_fusion_attention_bf16_keeps_the_dtype():
    q = rand(1, 2, 4, 8, dtype=torch.bfloat16)
    out = fa(q, q, q, 2, "BNSD", scale=0.5)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), sdpa_bnsd(q.float(), q.float(), q.float(), scale=0.5), rtol=2e-2, atol=2e-2)


def test_fusion_attention_sparse_modes():
    q, k, v = rand(1, 2, 5, 8, seed=1), rand(1, 2, 7, 8, seed=2), rand(1, 2, 7, 8, seed=3)
    i, j = torch.arange(5).view(5, 1), torch.arange(7).view(1, 7)
    top_left = fa(q, k, v, 2, "BNSD", atten_mask=MASK, sparse_mode=2)
    torch.testing.assert_close(top_left, sdpa_bnsd(q, k, v, attn_mask=j <= i, scale=1.0))  # default scale 1.0
    band = fa(q, k, v, 2, "BNSD", atten_mask=MASK, sparse_mode=4, pre_tockens=1, next_tockens=1)
    d = i + 2  # bottom-right diagonal
    torch.testing.assert_close(band, sdpa_bnsd(q, k, v, attn_mask=(j >= d - 1) & (j <= d + 1), scale=1.0))
    explicit = torch.rand(5, 7, generator=torch.Generator().manual_seed(9)) > 0.5
    explicit[:, 0] = False  # True = masked out; every row keeps key 0
    mode0 = fa(q, k, v, 2, "BNSD", atten_mask=explicit, pre_tockens=2, next_tockens=0)
    torch.testing.assert_close(mode0, sdpa_bnsd(q, k, v, attn_mask=~explicit & (j >= i - 2) & (j <= i), scale=1.0))
    mode1 = fa(q, k, v, 2, "BNSD", atten_mask=explicit[None, None], sparse_mode=1, pre_tockens=0, next_tockens=0)
    torch.testing.assert_close(mode1, sdpa_bnsd(q, k, v, attn_mask=~explicit, scale=1.0))  # tockens ignored
    unmasked = fa(q, k, v, 2, "BNSD", sparse_mode=3)  # no atten_mask: sparse_mode does not take effect
    torch.testing.assert_close(unmasked, sdpa_bnsd(q, k, v, scale=1.0))


def test_fusion_attention_tnd_forward_and_backward_per_sequence():
    q, k, v = rand(9, 4, 8, seed=1, grad=True), rand(12, 2, 8, seed=2, grad=True), rand(12, 2, 8, seed=3, grad=True)
    qlen, kvlen = [2, 2, 6, 9], [3, 3, 8, 12]  # the second sequence is empty
    out = fa(q, k, v, 4, "TND", atten_mask=MASK, sparse_mode=3, scale=0.3, actual_seq_qlen=qlen, actual_seq_kvlen=kvlen)
    t = [x.detach().requires_grad_() for x in (q, k, v)]
    pieces = []
    for (q0, q1), (k0, k1) in zip([(0, 2), (2, 6), (6, 9)], [(0, 3), (3, 8), (8, 12)]):
        one = [x.transpose(0, 1)[None] for x in (t[0][q0:q1], t[1][k0:k1], t[2][k0:k1])]
        pieces.append(sdpa_bnsd(*one, attn_mask=bottom_right(q1 - q0, k1 - k0), scale=0.3)[0].transpose(0, 1))
    expected = torch.cat(pieces)
    torch.testing.assert_close(out, expected)
    for got, want in zip(grads(out, q, k, v), grads(expected, *t)):
        torch.testing.assert_close(got, want)


def test_fusion_attention_dropout_keeps_the_expectation_shape():
    q = rand(1, 2, 4, 8)
    torch.manual_seed(0)
    out = fa(q, q, q, 2, "BNSD", keep_prob=0.5)
    assert out.shape == q.shape and torch.isfinite(out).all()


# ---------------------------------------------------------------------------------------------------------------------
# npu_fusion_attention: contract violations, one per rule

Q4 = rand(1, 4, 2, 8)  # BSND, 2 heads
T3 = rand(4, 2, 8)  # TND, 4 tokens


def _bsnd(**kwargs):
    args = dict(query=Q4, key=Q4, value=Q4, head_num=2, input_layout="BSND")
    args.update(kwargs)
    return ops.npu_fusion_attention(**args)


def _tnd(**kwargs):
    args = dict(
        query=T3, key=T3, value=T3, head_num=2, input_layout="TND", actual_seq_qlen=[2, 4], actual_seq_kvlen=[2, 4]
    )
    args.update(kwargs)
    return ops.npu_fusion_attention(**args)


FA_VIOLATIONS = {
    "float64": (lambda: _bsnd(query=Q4.double(), key=Q4.double(), value=Q4.double()), OpTypeError, "float16"),
    "mixed_dtypes": (lambda: _bsnd(key=Q4.half()), OpTypeError, "same dtype"),
    "not_a_tensor": (lambda: _bsnd(value=Q4.tolist()), OpTypeError, "Tensor"),
    "unknown_layout": (lambda: _bsnd(input_layout="BHSD"), OpContractError, "input_layout"),
    "layout_rank": (lambda: _bsnd(query=T3, key=T3, value=T3), OpContractError, "4-D query"),
    "head_num_not_query_heads": (lambda: _bsnd(head_num=4), OpContractError, "head_num"),
    "head_num_not_int": (lambda: _bsnd(head_num=2.0), OpTypeError, "head_num"),
    "head_num_over_256": (lambda: _bsnd(query=rand(1, 1, 257, 8), head_num=257), OpContractError, "1..256"),
    "heads_not_divisible": (
        lambda: _bsnd(query=rand(1, 4, 3, 8), key=rand(1, 4, 2, 8), value=rand(1, 4, 2, 8), head_num=3),
        OpContractError,
        "Nq/Nkv",
    ),
    "head_dims_differ": (lambda: _bsnd(key=rand(1, 4, 2, 16), value=rand(1, 4, 2, 16)), OpContractError, "Dq=Dk"),
    "head_dim_over_768": (
        lambda: _bsnd(query=(q := rand(1, 1, 1, 776)), key=q, value=q, head_num=1),
        OpContractError,
        "768",
    ),
    "key_value_shapes": (lambda: _bsnd(value=rand(1, 5, 2, 8)), OpContractError, "same shape"),
    "batch_sizes": (lambda: _bsnd(key=rand(2, 4, 2, 8), value=rand(2, 4, 2, 8)), OpContractError, "batch"),
    "bsh_heads_do_not_split_h": (
        lambda: _bsnd(query=rand(1, 4, 10), key=rand(1, 4, 10), value=rand(1, 4, 10), head_num=3, input_layout="BSH"),
        OpContractError,
        "divide",
    ),
    "keep_prob_zero": (lambda: _bsnd(keep_prob=0.0), OpContractError, "keep_prob"),
    "keep_prob_above_one": (lambda: _bsnd(keep_prob=1.5), OpContractError, "keep_prob"),
    "sparse_mode_9": (lambda: _bsnd(sparse_mode=9), OpContractError, "sparse_mode"),
    "tockens_not_int": (lambda: _bsnd(pre_tockens=2.0), OpTypeError, "tockens"),
    "mode3_mask_not_compressed": (
        lambda: _bsnd(atten_mask=torch.ones(2048, 2048, dtype=torch.bool).tril(), sparse_mode=3),
        OpContractError,
        "compressed",
    ),
    "mode2_mask_not_2048": (
        lambda: _bsnd(atten_mask=torch.ones(4, 4, dtype=torch.bool).triu(1), sparse_mode=2),
        OpContractError,
        "compressed",
    ),
    "mask_dtype": (lambda: _bsnd(atten_mask=torch.zeros(4, 4)), OpTypeError, "bool or uint8"),
    "mode0_mask_shape": (lambda: _bsnd(atten_mask=torch.zeros(4, 5, dtype=torch.bool)), OpContractError, "BNSS"),
    "mode0_mask_1nss": (
        lambda: _bsnd(
            query=rand(2, 4, 2, 8),
            key=rand(2, 4, 2, 8),
            value=rand(2, 4, 2, 8),
            atten_mask=torch.zeros(1, 2, 4, 4, dtype=torch.bool),
        ),
        OpContractError,
        "BNSS",
    ),
    "tnd_tensor_seqlens": (lambda: _tnd(actual_seq_qlen=torch.tensor([2, 4])), OpTypeError, "host int lists"),
    "tnd_float_seqlens": (lambda: _tnd(actual_seq_kvlen=[2.0, 4.0]), OpTypeError, "host int lists"),
    "tnd_missing_seqlens": (lambda: _tnd(actual_seq_qlen=None), OpContractError, "needs actual_seq_qlen"),
    "tnd_not_cumulative": (
        lambda: _tnd(actual_seq_qlen=[3, 1, 4], actual_seq_kvlen=[1, 3, 4]),
        OpContractError,
        "cumulative",
    ),
    "tnd_not_ending_at_t": (lambda: _tnd(actual_seq_qlen=[2, 3], actual_seq_kvlen=[2, 3]), OpContractError, "T=4"),
    "tnd_lengths_differ": (lambda: _tnd(actual_seq_qlen=[4], actual_seq_kvlen=[2, 4]), OpContractError, "same length"),
    "tnd_over_1024_sequences": (
        lambda: _tnd(
            query=(t := rand(1025, 1, 8)),
            key=t,
            value=t,
            head_num=1,
            actual_seq_qlen=list(range(1, 1026)),
            actual_seq_kvlen=list(range(1, 1026)),
        ),
        OpContractError,
        "1..1024",
    ),
    "tnd_head_num": (lambda: _tnd(head_num=4), OpContractError, "head_num"),
    # [FA] inner_precise: "当前0、1为保留配置值, 2为使能无效行计算"
    "inner_precise_3": (lambda: _bsnd(inner_precise=3), OpContractError, "inner_precise must be 0, 1 or 2"),
    "inner_precise_float": (lambda: _bsnd(inner_precise=2.0), OpTypeError, "inner_precise must be an int"),
}


@pytest.mark.parametrize("name", list(FA_VIOLATIONS))
def test_fusion_attention_rejects(name):
    call, error, match = FA_VIOLATIONS[name]
    with pytest.raises(error, match=match) as info:
        call()
    assert str(info.value).startswith("npu_fusion_attention: ")


def test_fusion_attention_takes_scalars_as_torch_parses_them():
    """torch's argument parser also takes NumPy integers and 0-d tensors for int/float arguments: so does the
    reference, and a host list of NumPy integers is still a host int list."""
    expected = _bsnd(scale=0.5)[0]
    torch.testing.assert_close(_bsnd(head_num=torch.tensor(2), scale=torch.tensor(0.5))[0], expected)
    np = pytest.importorskip("numpy")  # the rest needs NumPy
    torch.testing.assert_close(_bsnd(head_num=np.int64(2), scale=np.float32(0.5))[0], expected)
    seqs = [np.int64(2), np.int64(4)]
    torch.testing.assert_close(_tnd(actual_seq_qlen=seqs, actual_seq_kvlen=seqs)[0], _tnd()[0])


def test_fusion_attention_features_outside_the_reference_are_not_implemented():
    with pytest.raises(NotImplementedError):
        _bsnd(sparse_mode=5)
    with pytest.raises(NotImplementedError):
        _bsnd(pse=torch.zeros(1))


# ---------------------------------------------------------------------------------------------------------------------
# npu_rms_norm and npu_gemma_rms_norm


def rms_formula(x, w, eps, offset=0.0):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (offset + w.float())).to(x.dtype)


@pytest.mark.parametrize(
    "x_dtype,g_dtype",
    [
        (torch.float16, torch.float32),
        (torch.bfloat16, torch.float32),
        (torch.float16, torch.float16),
        (torch.bfloat16, torch.bfloat16),
        (torch.float32, torch.float32),
    ],
)
def test_rms_norm_allowed_dtype_pairs(x_dtype, g_dtype):
    x, w = rand(2, 3, 16, dtype=x_dtype, seed=1), rand(16, dtype=g_dtype, seed=2)
    y, rstd = ops.npu_rms_norm(x, w, epsilon=1e-5)
    assert y.dtype == x_dtype and rstd.dtype == torch.float32 and rstd.shape == (2, 3, 1)
    torch.testing.assert_close(y, rms_formula(x, w, 1e-5))


def test_rms_norm_backward_matches_the_formula():
    x, w = rand(2, 3, 16, seed=1, grad=True), rand(16, seed=2, grad=True)
    y = ops.npu_rms_norm(x, w, epsilon=1e-5)[0]
    x2, w2 = (t.detach().requires_grad_() for t in (x, w))
    expected = F.rms_norm(x2, (16,), w2, eps=1e-5)
    torch.testing.assert_close(y, expected)
    for got, want in zip(grads(y, x, w), grads(expected, x2, w2)):
        torch.testing.assert_close(got, want)


def test_rms_norm_over_two_trailing_dims():
    x, w = rand(2, 3, 4, seed=1), rand(3, 4, seed=2)
    torch.testing.assert_close(ops.npu_rms_norm(x, w)[0], F.rms_norm(x, (3, 4), w, eps=1e-6))


RMS_VIOLATIONS = {
    "fp32_x_bf16_gamma": (lambda: ops.npu_rms_norm(rand(2, 16), rand(16, dtype=torch.bfloat16)), OpTypeError),
    "float64": (lambda: ops.npu_rms_norm(rand(2, 16).double(), rand(16).double()), OpTypeError),
    "one_dim": (lambda: ops.npu_rms_norm(rand(16), rand(16)), OpContractError),
    "nine_dims": (lambda: ops.npu_rms_norm(rand(*[1] * 8, 16), rand(16)), OpContractError),
    "gamma_not_trailing": (lambda: ops.npu_rms_norm(rand(2, 16), rand(2)), OpContractError),
    "gamma_not_a_tensor": (lambda: ops.npu_rms_norm(rand(2, 16), [1.0] * 16), OpTypeError),
}


@pytest.mark.parametrize("name", list(RMS_VIOLATIONS))
def test_rms_norm_rejects(name):
    call, error = RMS_VIOLATIONS[name]
    with pytest.raises(error, match="^npu_rms_norm: "):
        call()


def test_gemma_rms_norm_forward_matches_the_formula():
    x, w = rand(2, 3, 16, seed=1), rand(16, seed=2)
    y, rstd = ops.npu_gemma_rms_norm(x, w, epsilon=1e-5)
    torch.testing.assert_close(y, F.rms_norm(x, (16,), 1 + w, eps=1e-5))
    assert rstd.dtype == torch.float32 and rstd.shape == (2, 3, 1)


def test_gemma_rms_norm_has_no_backward_and_warns_once(monkeypatch):
    monkeypatch.setattr(ops, "_WARNED", set())
    x, w = rand(2, 3, 16, seed=1, grad=True), rand(16, seed=2, grad=True)
    with pytest.warns(UserWarning, match="npu_gemma_rms_norm has no backward"):
        y, rstd = ops.npu_gemma_rms_norm(x, w)
    assert not y.requires_grad and not rstd.requires_grad
    with pytest.raises(RuntimeError):  # a training port through it loses the gradient, visibly
        y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops.npu_gemma_rms_norm(x, w)  # once per process


def test_gemma_rms_norm_does_not_warn_without_a_gradient_to_drop(monkeypatch):
    monkeypatch.setattr(ops, "_WARNED", set())
    x, w = rand(2, 3, 16, seed=1, grad=True), rand(16, seed=2, grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops.npu_gemma_rms_norm(rand(2, 16), rand(16))
        with torch.no_grad():
            ops.npu_gemma_rms_norm(x, w)
    assert not ops._WARNED


def test_gemma_rms_norm_rejects_a_gamma_that_is_not_the_trailing_dims():
    with pytest.raises(OpContractError, match="^npu_gemma_rms_norm: gamma"):
        ops.npu_gemma_rms_norm(rand(2, 16), rand(8))


# ---------------------------------------------------------------------------------------------------------------------
# npu_rotary_mul


def rotate_half(x):
    return torch.cat((-x[..., x.shape[-1] // 2 :], x[..., : x.shape[-1] // 2]), dim=-1)


def rotate_interleaved(x):  # the documented rearrange(stack((-x2, x1), -1), "... d two -> ...(d two)")
    out = torch.empty_like(x)
    out[..., 0::2] = -x[..., 1::2]
    out[..., 1::2] = x[..., 0::2]
    return out


def test_rotary_half_forward_and_backward():
    x, cos, sin = (
        rand(2, 3, 5, 8, seed=1, grad=True),
        table(2, 1, 5, 8, seed=2, grad=True),
        table(2, 1, 5, 8, seed=3, grad=True),
    )
    out = ops.npu_rotary_mul(x, cos, sin)
    x2, c2, s2 = (t.detach().requires_grad_() for t in (x, cos, sin))
    expected = x2 * c2 + rotate_half(x2) * s2
    torch.testing.assert_close(out, expected)
    for got, want in zip(grads(out, x, cos, sin), grads(expected, x2, c2, s2)):
        torch.testing.assert_close(got, want)


def test_rotary_interleave_and_bsnd_tables():
    x, cos, sin = rand(2, 5, 3, 8, seed=1), table(1, 5, 1, 8, seed=2), table(1, 5, 1, 8, seed=3)  # BSND, 1S1D
    torch.testing.assert_close(ops.npu_rotary_mul(x, cos, sin), x * cos + rotate_half(x) * sin)
    torch.testing.assert_close(
        ops.npu_rotary_mul(x, cos, sin, rotary_mode="interleave"), x * cos + rotate_interleaved(x) * sin
    )


ROPE_VIOLATIONS = {
    # [ROPE] "B,N<1000"
    "batch_1000": (  # B and N 1000 (the sequence dim may be longer; the op has no layout argument to say which)
        lambda: ops.npu_rotary_mul(rand(1000, 1000, 1, 2), table(1, 1, 1, 2), table(1, 1, 1, 2)),
        OpContractError,
        "below 1000",
    ),
    "three_dims": (lambda: ops.npu_rotary_mul(rand(3, 4, 8), rand(1, 4, 8), rand(1, 4, 8)), OpContractError, "4-D"),
    "odd_head_dim": (
        lambda: ops.npu_rotary_mul(rand(1, 1, 2, 7), rand(1, 1, 2, 7), rand(1, 1, 2, 7)),
        OpContractError,
        "even",
    ),
    "head_dim_896": (
        lambda: ops.npu_rotary_mul(rand(1, 1, 1, 896), rand(1, 1, 1, 896), rand(1, 1, 1, 896)),
        OpContractError,
        "896",
    ),
    "unknown_mode": (
        lambda: ops.npu_rotary_mul(rand(1, 1, 2, 8), rand(1, 1, 2, 8), rand(1, 1, 2, 8), "quarter"),
        OpContractError,
        "rotary_mode",
    ),
    "float64": (lambda: ops.npu_rotary_mul(*(rand(1, 1, 2, 8).double() for _ in range(3))), OpTypeError, "float16"),
    "r1_r2_shapes": (
        lambda: ops.npu_rotary_mul(rand(2, 1, 2, 8), rand(1, 1, 2, 8), rand(2, 1, 2, 8)),
        OpContractError,
        "same shape",
    ),
    "r_does_not_broadcast": (
        lambda: ops.npu_rotary_mul(rand(2, 2, 5, 8), rand(1, 1, 3, 8), rand(1, 1, 3, 8)),
        OpContractError,
        "broadcast",
    ),
    "r_larger_than_input": (
        lambda: ops.npu_rotary_mul(rand(1, 2, 5, 8), rand(2, 1, 5, 8), rand(2, 1, 5, 8)),
        OpContractError,
        "broadcast",
    ),
    "interleave_b1sd": (
        lambda: ops.npu_rotary_mul(rand(2, 2, 5, 8), rand(2, 1, 5, 8), rand(2, 1, 5, 8), rotary_mode="interleave"),
        OpContractError,
        "11SD",
    ),
}


@pytest.mark.parametrize("name", list(ROPE_VIOLATIONS))
def test_rotary_rejects(name):
    call, error, match = ROPE_VIOLATIONS[name]
    with pytest.raises(error, match=match) as info:
        call()
    assert str(info.value).startswith("npu_rotary_mul: ")


# ---------------------------------------------------------------------------------------------------------------------
# npu_swiglu


@pytest.mark.parametrize("dim", [-1, 0])
def test_swiglu_forward_and_backward(dim):
    x = rand(4, 3, 6, seed=1, grad=True)
    out = ops.npu_swiglu(x, dim=dim)
    x2 = x.detach().requires_grad_()
    a, b = x2.chunk(2, dim=dim)
    expected = a * torch.sigmoid(a) * b
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(grads(out, x)[0], grads(expected, x2)[0])


SWIGLU_VIOLATIONS = {
    "odd_split_dim": (lambda: ops.npu_swiglu(rand(2, 5)), OpContractError, "even size"),
    "int_dtype": (lambda: ops.npu_swiglu(torch.ones(2, 4, dtype=torch.int32)), OpTypeError, "float16"),
    "nine_dims": (lambda: ops.npu_swiglu(rand(*[1] * 8, 2)), OpContractError, "1 to 8"),
    "dim_out_of_range": (lambda: ops.npu_swiglu(rand(2, 4), dim=2), OpContractError, "out of range"),
    "dim_not_int": (lambda: ops.npu_swiglu(rand(2, 4), dim=1.0), OpTypeError, "dim"),
}


@pytest.mark.parametrize("name", list(SWIGLU_VIOLATIONS))
def test_swiglu_rejects(name):
    call, error, match = SWIGLU_VIOLATIONS[name]
    with pytest.raises(error, match=f"^npu_swiglu: .*{match}"):
        call()


# ---------------------------------------------------------------------------------------------------------------------
# npu_geglu


@pytest.mark.parametrize("approximate", [0, 1])
@pytest.mark.parametrize("activate_left", [True, False])
@pytest.mark.parametrize("dim", [-1, 1])
def test_geglu_forward_and_backward(dim, activate_left, approximate):
    x = rand(4, 6, 6, seed=1, grad=True)
    out, gelu = ops.npu_geglu(x, dim=dim, approximate=approximate, activate_left=activate_left)
    x2 = x.detach().requires_grad_()
    a, b = x2.chunk(2, dim=dim)
    gate, other = (a, b) if activate_left else (b, a)
    expected_gelu = F.gelu(gate, approximate="tanh" if approximate else "none")
    torch.testing.assert_close(out, expected_gelu * other)
    torch.testing.assert_close(gelu, expected_gelu)
    torch.testing.assert_close(grads(out, x)[0], grads(expected_gelu * other, x2)[0])


def test_geglu_defaults_activate_the_second_half_with_tanh():
    """The op's defaults (approximate=1, activate_left=False) are not F.gelu's: a port must spell both."""
    x = rand(2, 8, seed=2)
    a, b = x.chunk(2, dim=-1)
    torch.testing.assert_close(ops.npu_geglu(x)[0], a * F.gelu(b, approximate="tanh"))
    assert not torch.allclose(ops.npu_geglu(x)[0], F.gelu(a) * b)


def test_geglu_keeps_the_input_dtype():
    x = rand(2, 8, seed=3).to(torch.bfloat16)
    out, gelu = ops.npu_geglu(x, approximate=0, activate_left=True)
    assert out.dtype == gelu.dtype == torch.bfloat16 and out.shape == gelu.shape == (2, 4)


GEGLU_VIOLATIONS = {
    "odd_split_dim": (lambda: ops.npu_geglu(rand(2, 5)), OpContractError, "even size"),
    "int_dtype": (lambda: ops.npu_geglu(torch.ones(2, 4, dtype=torch.int32)), OpTypeError, "float16"),
    "zero_dims": (lambda: ops.npu_geglu(torch.tensor(1.0)), OpContractError, "at least 1 dim"),
    "dim_out_of_range": (lambda: ops.npu_geglu(rand(2, 4), dim=2), OpContractError, "out of range"),
    "approximate_string": (lambda: ops.npu_geglu(rand(2, 4), approximate="tanh"), OpTypeError, "approximate"),
    "approximate_two": (lambda: ops.npu_geglu(rand(2, 4), approximate=2), OpContractError, "0 \\(none\\)"),
    "activate_left_int": (lambda: ops.npu_geglu(rand(2, 4), activate_left=1), OpTypeError, "activate_left"),
}


@pytest.mark.parametrize("name", list(GEGLU_VIOLATIONS))
def test_geglu_rejects(name):
    call, error, match = GEGLU_VIOLATIONS[name]
    with pytest.raises(error, match=f"^npu_geglu: .*{match}"):
        call()


# ---------------------------------------------------------------------------------------------------------------------
# npu_scaled_masked_softmax (NPU428 writes it)


def test_scaled_masked_softmax_is_the_masked_softmax_of_the_todo():
    """Where some key is kept in every row, the op is softmax(x.masked_fill(mask, -inf)) (NPU428's claim), forward
    and backward; a fully masked row is uniform (a fill of -inf would give NaN)."""
    x = rand(2, 2, 32, 64, seed=4, grad=True)
    mask = torch.rand(2, 1, 32, 64, generator=torch.Generator().manual_seed(5)) < 0.5
    mask[..., 0] = False
    out = ops.npu_scaled_masked_softmax(x, mask, 0.5)
    x2 = x.detach().requires_grad_()
    expected = F.softmax((x2 * 0.5).masked_fill(mask, float("-inf")), dim=-1)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(grads(out, x)[0], grads(expected, x2)[0])
    full = torch.ones(32, 64, dtype=torch.bool)
    torch.testing.assert_close(ops.npu_scaled_masked_softmax(x.detach(), full), torch.full((2, 2, 32, 64), 1 / 64))


SMS_VIOLATIONS = {
    "short_axis": (
        lambda: ops.npu_scaled_masked_softmax(rand(2, 16, 64), torch.zeros(16, 64, dtype=torch.bool)),
        OpContractError,
        "H must be 32..4096",
    ),
    "odd_width": (
        lambda: ops.npu_scaled_masked_softmax(rand(2, 32, 40), torch.zeros(32, 40, dtype=torch.bool)),
        OpContractError,
        "W must be",
    ),
    "float_mask": (lambda: ops.npu_scaled_masked_softmax(rand(32, 32), torch.zeros(32, 32)), OpTypeError, "bool"),
    "no_broadcast": (
        lambda: ops.npu_scaled_masked_softmax(rand(32, 32), torch.zeros(2, 32, 32, dtype=torch.bool)),
        OpContractError,
        "broadcast",
    ),
    "int_scores": (
        lambda: ops.npu_scaled_masked_softmax(
            torch.ones(32, 32, dtype=torch.int32), torch.zeros(32, 32, dtype=torch.bool)
        ),
        OpTypeError,
        "float16",
    ),
}


@pytest.mark.parametrize("name", list(SMS_VIOLATIONS))
def test_scaled_masked_softmax_rejects(name):
    call, error, match = SMS_VIOLATIONS[name]
    with pytest.raises(error, match=f"^npu_scaled_masked_softmax: .*{match}"):
        call()


def test_scaled_masked_softmax_has_no_triu_mask_yet():
    with pytest.raises(NotImplementedError, match="fixed_triu_mask"):
        ops.npu_scaled_masked_softmax(rand(32, 32), torch.zeros(32, 32, dtype=torch.bool), fixed_triu_mask=True)


# ---------------------------------------------------------------------------------------------------------------------
# MindIE-SD attention_forward


def test_mindiesd_attention_forward_layouts_scale_and_mask():
    q, k, v = rand(2, 5, 3, 8, seed=1, grad=True), rand(2, 7, 3, 8, seed=2), rand(2, 7, 3, 8, seed=3)  # BSND
    out = ops.mindiesd_attention_forward(q, k, v)
    q2 = q.detach().requires_grad_()
    expected = sdpa_bnsd(q2.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)  # 8 ** -0.5
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(grads(out, q)[0], grads(expected, q2)[0])
    keep = bottom_right(5, 7)  # SDPA polarity: True = attend
    heads_first = [t.detach().transpose(1, 2) for t in (q, k, v)]
    torch.testing.assert_close(
        ops.mindiesd_attention_forward(
            *heads_first,
            attn_mask=keep,
            scale=0.2,
            head_first=True,
            opt_mode="manual",
            op_type="fused_attn_score",
            layout="BNSD",
        ),
        sdpa_bnsd(*heads_first, attn_mask=keep, scale=0.2),
    )


MINDIESD_VIOLATIONS = {
    "three_dims": (lambda: ops.mindiesd_attention_forward(rand(2, 5, 8), rand(2, 5, 8), rand(2, 5, 8)), "4-D"),
    "head_counts": (
        lambda: ops.mindiesd_attention_forward(rand(1, 5, 4, 8), rand(1, 5, 2, 8), rand(1, 5, 2, 8)),
        "head count",
    ),
    "opt_mode": (
        lambda: ops.mindiesd_attention_forward(*(rand(1, 2, 2, 8) for _ in range(3)), opt_mode="fast"),
        "opt_mode",
    ),
    "op_type": (
        lambda: ops.mindiesd_attention_forward(*(rand(1, 2, 2, 8) for _ in range(3)), op_type="sdpa"),
        "op_type",
    ),
}


@pytest.mark.parametrize("name", list(MINDIESD_VIOLATIONS))
def test_mindiesd_attention_forward_rejects(name):
    call, match = MINDIESD_VIOLATIONS[name]
    with pytest.raises(OpContractError, match=f"^mindiesd attention_forward: .*{match}"):
        call()


def test_rotary_mul_casts_mixed_dtype_tables_to_the_input_dtype():
    """A bf16 input (a projection under autocast) with fp32 cos/sin: op-plugin casts the tables to the input's dtype
    and returns the input's dtype, where the eager expression would promote to fp32."""
    x, cos, sin = rand(1, 2, 3, 8).bfloat16(), table(1, 1, 3, 8), table(1, 1, 3, 8, seed=1)
    out = ops.npu_rotary_mul(x, cos, sin)
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, ops.npu_rotary_mul(x, cos.bfloat16(), sin.bfloat16()))
    with pytest.raises(OpTypeError, match="float16"):
        ops.npu_rotary_mul(x, cos.long(), sin)


def test_rotary_mul_takes_tables_scaled_above_one():
    """YaRN's mscale (and LongRoPE's attention factor) scale the cos/sin tables above 1: the real op multiplies by
    whatever r1 and r2 hold, and so does the reference."""
    x, cos, sin = rand(1, 1, 2, 8), table(1, 1, 2, 8) * 1.2, table(1, 1, 2, 8) * 1.2
    x1, x2 = x.chunk(2, dim=-1)
    expected = cos * x + sin * torch.cat((-x2, x1), dim=-1)
    torch.testing.assert_close(ops.npu_rotary_mul(x, cos, sin), expected)


def test_fully_masked_rows_are_a_contract_note_unless_inner_precise_2(monkeypatch):
    """[FA] a fully masked row is computed right only with inner_precise=2 (or where the op enables it itself,
    sparse_mode 3 with Sq > Skv): the reference gives 0 and tells its note hook (the emulator's report)."""
    notes: list[str] = []
    monkeypatch.setattr(ops, "note", notes.append)
    mask = torch.zeros(4, 4, dtype=torch.bool)
    mask[1] = True  # query 1 attends to no key
    out = _bsnd(atten_mask=mask, sparse_mode=1)[0]
    assert len(notes) == 1 and "fully masked rows" in notes[0] and "inner_precise=2" in notes[0]
    assert torch.count_nonzero(out[:, 1]) == 0
    _bsnd(atten_mask=mask, sparse_mode=1, inner_precise=2)
    _bsnd(atten_mask=torch.zeros(4, 4, dtype=torch.bool), sparse_mode=1)
    assert len(notes) == 1
