"""NPU430 beyond the golden cases' fp32/bf16 runs (tests/test_numerical_equivalence.py): padding masks filled with
-inf and with the dtype's lowest value, forward and backward in fp32 and bf16; a row masked entirely; a bool mask or
none at run time keeps SDPA; dropout's keep_prob; a wrong polarity is caught."""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

from fake_modules import installed, on_npu_tensors  # noqa: E402
from test_numerical_equivalence import (  # noqa: E402
    CHANGING,
    TOLERANCE,
    Spec,
    compare,
    diffusers_attn,
    diffusers_mask,
    qkv,
    rand,
    trace,
)

DIFFUSERS = next(c for c in CHANGING if c.id == "NPU430/diffusers_processor")
HF = next(c for c in CHANGING if c.id == "NPU430/hf_sdpa_forward")
FILLS = {"-inf": float("-inf"), "finfo.min": None, "-10000": -10000.0}


def _processor_spec(fill: float | None) -> Spec:
    def run(ns, dt):
        value = torch.finfo(dt).min if fill is None else fill
        hidden, encoder = rand(2, 5, 16, dtype=dt), rand(2, 6, 16, dtype=dt, seed=1)
        return ns["AttnProcessor2_0"]()(diffusers_attn(2, dt), hidden, encoder, diffusers_mask([6, 3], 6, dt, value))

    return Spec(run, plain_original=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("fill", FILLS.values(), ids=FILLS.keys())
def test_padding_masks_forward_and_backward(fill, dtype):
    spec = _processor_spec(fill)
    calls: list[str] = []
    expected = trace(DIFFUSERS.input.read_text("utf-8"), DIFFUSERS.id, "gpu", spec, dtype, [], grad=True)
    actual = trace(DIFFUSERS.expected.read_text("utf-8"), DIFFUSERS.id, "npu", spec, dtype, calls, grad=True)
    assert compare(DIFFUSERS, spec, dtype, expected, actual, calls, "cpu")
    assert calls.count("npu_fusion_attention") == 1


def _hf(text: str, side: str, mask, calls: list[str] | None = None, **kwargs):
    namespace: dict = {"__name__": "hf_sdpa"}
    with installed(side, calls):
        exec(compile(on_npu_tensors(text) if side == "npu" else text, "hf_sdpa", "exec"), namespace)
        q, k, v = qkv((2, 4, 5, 8), (2, 2, 5, 8), torch.float32)
        module = types.SimpleNamespace(is_causal=True)
        return namespace["sdpa_attention_forward"](module, q, k, v, mask, scaling=8**-0.5, **kwargs)[0]


@pytest.mark.parametrize("fill", [float("-inf"), torch.finfo(torch.float32).min], ids=["-inf", "finfo.min"])
def test_a_row_masked_entirely_is_zero_and_the_others_agree(fill):
    """Left padding: the second sequence's first two queries attend to no key. The op's invalid-row computation
    (inner_precise=2) gives 0 there; SDPA gives 0 for -inf (torch's safe softmax) and averages v for a finite
    lowest value (HF ignores those rows). Every other row is SDPA's."""
    allowed = (
        torch.ones(5, 5, dtype=torch.bool).tril()[None, None]
        & (torch.arange(5) >= torch.tensor([[0], [2]]))[:, None, None, :]
    )
    assert not allowed[1, 0, :2].any()
    mask = torch.where(allowed, 0.0, fill)
    sdpa = _hf(HF.input.read_text("utf-8"), "gpu", mask)  # (B, S, N, D)
    fused = _hf(HF.expected.read_text("utf-8"), "npu", mask)
    assert torch.equal(fused[1, :2], torch.zeros_like(fused[1, :2]))
    if fill == float("-inf"):
        assert torch.equal(sdpa[1, :2], torch.zeros_like(sdpa[1, :2]))
    else:
        assert not torch.allclose(sdpa[1, :2], torch.zeros_like(sdpa[1, :2]))
    torch.testing.assert_close(fused[0], sdpa[0], **TOLERANCE[torch.float32])
    torch.testing.assert_close(fused[1, 2:], sdpa[1, 2:], **TOLERANCE[torch.float32])


@pytest.mark.parametrize("mask", [None, "bool"], ids=["none", "bool"])
def test_a_bool_mask_or_none_keeps_sdpa(mask):
    """At run time only a floating mask takes the op: a bool one and None reach torch_npu's fused SDPA already."""
    if mask == "bool":
        mask = torch.ones(5, 5, dtype=torch.bool).tril()[None, None].expand(2, 1, 5, 5)
    calls: list[str] = []
    out = _hf(HF.expected.read_text("utf-8"), "npu", mask, calls)
    assert "npu_fusion_attention" not in calls
    torch.testing.assert_close(out, _hf(HF.input.read_text("utf-8"), "gpu", mask))


def test_dropout_becomes_keep_prob():
    seen: list[float] = []
    namespace: dict = {"__name__": "hf_sdpa"}
    with installed("npu"):
        exec(compile(on_npu_tensors(HF.expected.read_text("utf-8")), "hf_sdpa", "exec"), namespace)
        import torch_npu

        real = torch_npu.npu_fusion_attention

        def spy(*args, **kwargs):
            seen.append(kwargs["keep_prob"])
            return real(*args, **{**kwargs, "keep_prob": 1.0})

        torch_npu.npu_fusion_attention = spy
        try:
            q, k, v = qkv((2, 4, 5, 8), (2, 2, 5, 8), torch.float32)
            mask = torch.zeros(2, 1, 5, 5)
            namespace["sdpa_attention_forward"](types.SimpleNamespace(), q, k, v, mask, dropout=0.25)
        finally:
            torch_npu.npu_fusion_attention = real
    assert seen == [0.75]


@pytest.mark.parametrize(
    "mistake",
    [("(causal_mask < 0)", "(causal_mask > 0)"), ("scale=scaling if", "scale=1.0 if")],
    ids=["polarity", "scale"],
)
def test_the_comparison_catches_a_wrong_port(mistake):
    good = HF.expected.read_text("utf-8")
    wrong = good.replace(*mistake)
    assert wrong != good
    allowed = torch.ones(5, 5, dtype=torch.bool).tril()[None, None].expand(2, 1, 5, 5)
    mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)
    assert not torch.allclose(_hf(wrong, "npu", mask), _hf(HF.input.read_text("utf-8"), "gpu", mask), atol=1e-3)


def test_other_devices_drop_keeps_the_run_time_dtype_test():
    """`--other-devices drop`: no device test, but a bool mask or None still keeps SDPA (it reaches the kernel)."""
    from ascend_port.core.options import PortOptions
    from ascend_port.core.selection import Selection
    from ascend_port.port.python import port_source

    drop = PortOptions(other_devices="drop")
    text = port_source(HF.input.read_text("utf-8"), Selection(), drop).new_text
    assert text is not None and '.device.type == "npu"' not in text
    assert "    if (\n        causal_mask is not None\n        and causal_mask.is_floating_point()\n" in text
    assert "scaled_dot_product_attention(" in text
    # the SDPA call kept in the `else` is not ported again (no device test marks the branch: the op in its `if` does)
    assert port_source(text, Selection(), drop).new_text in (None, text)
