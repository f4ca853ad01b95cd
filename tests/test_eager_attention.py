"""NPU425 beyond the golden cases' fp32/bf16 runs (tests/test_numerical_equivalence.py): fp16 and autocast, forward
and backward; HF's output_attentions keeps the eager path; dropout's keep_prob; `--other-devices drop`; and mistakes
in a port that the comparison must catch."""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

from fake_modules import installed, on_npu_tensors  # noqa: E402
from test_numerical_equivalence import CHANGING, SPECS, TOLERANCE, causal_padding, compare, hf_mask, qkv, trace  # noqa: E402

from ascend_port.core.options import PortOptions  # noqa: E402
from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.port.python import port_source  # noqa: E402

CASES = [c for c in CHANGING if c.rule == "NPU425"]
IDS = [c.id for c in CASES]


def _run(case, dtype, *, autocast: bool = False):
    spec = SPECS[case.id]
    calls: list[str] = []
    with torch.autocast("cpu", dtype=dtype, enabled=autocast):
        expected = trace(case.input.read_text("utf-8"), case.id, "gpu", spec, dtype, [], grad=True)
        actual = trace(case.expected.read_text("utf-8"), case.id, "npu", spec, dtype, calls, grad=True)
    assert compare(case, spec, dtype, expected, actual, calls, "cpu")
    assert calls.count("npu_fusion_attention") == 1


def test_every_npu425_case_is_here():
    assert len(CASES) >= 3


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fp16_forward_and_backward(case):
    _run(case, torch.float16)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_under_autocast(case):
    """bf16 q/k/v under CPU autocast (what a model's projections give it there): the eager matmuls run in bf16, the
    softmax as the code says; the op in the inputs' dtype."""
    _run(case, torch.bfloat16, autocast=True)


def _hf_case():
    return next(c for c in CASES if c.id == "NPU425/hf_eager")


def _hf_call(text: str, calls: list[str], module, **kwargs):
    namespace: dict = {"__name__": "hf_eager"}
    with installed("npu", calls):
        exec(compile(on_npu_tensors(text), "hf_eager", "exec"), namespace)
        q, k, v = qkv((2, 4, 5, 8), (2, 2, 7, 8), torch.float32)
        mask = hf_mask(causal_padding([7, 6], 5, 9), torch.float32)
        return namespace["eager_attention_forward"](module, q, k, v, mask, 8**-0.5, **kwargs)


@pytest.mark.parametrize(
    "module, kwargs, fused",
    [
        (types.SimpleNamespace(num_key_value_groups=2, training=False), {}, True),
        (types.SimpleNamespace(num_key_value_groups=2, training=False), {"output_attentions": True}, False),
        (types.SimpleNamespace(num_key_value_groups=2, training=False), {"output_attentions": False}, True),
        (
            types.SimpleNamespace(
                num_key_value_groups=2, training=False, config=types.SimpleNamespace(output_attentions=True)
            ),
            {},
            False,
        ),
    ],
    ids=["default", "asked_in_call", "refused_in_call", "asked_in_config"],
)
def test_hf_weights_asked_for_keep_the_eager_path(module, kwargs, fused):
    """Where HF asks for the attention weights (output_attentions in the call, else in the config), the eager code
    runs and returns them; elsewhere the op runs and the weights are None, as HF's SDPA path returns."""
    calls: list[str] = []
    out, weights = _hf_call(_hf_case().expected.read_text("utf-8"), calls, module, **kwargs)
    assert ("npu_fusion_attention" in calls) == fused
    assert (weights is None) == fused
    expected, expected_weights = _hf_call(_hf_case().input.read_text("utf-8"), [], module, **kwargs)
    torch.testing.assert_close(out, expected, **TOLERANCE[torch.float32])
    if not fused:
        torch.testing.assert_close(weights, expected_weights)


def test_dropout_becomes_keep_prob_in_training_only():
    seen: list[float] = []
    namespace: dict = {"__name__": "hf_eager"}
    with installed("npu"):
        exec(compile(on_npu_tensors(_hf_case().expected.read_text("utf-8")), "hf_eager", "exec"), namespace)
        import torch_npu

        real = torch_npu.npu_fusion_attention

        def spy(*args, **kwargs):
            seen.append(kwargs["keep_prob"])
            return real(*args, **kwargs)

        torch_npu.npu_fusion_attention = spy
        try:
            for training in (True, False):
                module = types.SimpleNamespace(num_key_value_groups=2, training=training)
                q, k, v = qkv((2, 4, 5, 8), (2, 2, 5, 8), torch.float32)
                namespace["eager_attention_forward"](module, q, k, v, None, 0.3, dropout=0.25)
        finally:
            torch_npu.npu_fusion_attention = real
    assert seen == [0.75, 1.0]


@pytest.mark.parametrize(
    "case_id, mistake",
    [
        ("NPU425/hf_eager", ("scale=scaling", "scale=1.0")),  # the op's default scale
        ("NPU425/hf_eager", ("key.shape[-2]] < 0", "key.shape[-2]] == 0")),  # the additive mask's polarity
        ("NPU425/nanogpt_causal", ("(self.bias[:, :, :T, :T] == 0)", "(self.bias[:, :, :T, :T] != 0)")),  # polarity
        ("NPU425/prescaled_padding", ("scale=head_dim ** (-0.5)", "scale=head_dim ** (-0.5) * 1.01")),  # 1% off
    ],
    ids=["default_scale", "additive_polarity", "bool_polarity", "scale_off"],
)
def test_the_comparison_catches_a_wrong_port(case_id, mistake):
    case = next(c for c in CASES if c.id == case_id)
    good = case.expected.read_text("utf-8")
    wrong = good.replace(*mistake)
    assert wrong != good
    spec = SPECS[case.id]
    expected = trace(case.input.read_text("utf-8"), case.id, "gpu", spec, torch.float32, [], grad=True)
    try:
        actual = trace(wrong, case.id, "npu", spec, torch.float32, [], grad=True)
    except (AssertionError, RuntimeError, ValueError):
        return  # the reference refused the call, as the op would
    assert not all(torch.allclose(a, e, **TOLERANCE[torch.float32]) for a, e in zip(actual.outputs, expected.outputs))


def test_other_devices_drop_writes_the_op_alone():
    """`--other-devices drop`: no device test; what the code does not prove (q 4-D, HF's output_attentions) stays a
    test, with the original in its else."""
    ported = {
        c.id: port_source(c.input.read_text("utf-8"), Selection(), PortOptions(other_devices="drop")).new_text
        for c in CASES
    }
    assert all(text is not None and '.device.type == "npu"' not in text for text in ported.values())
    assert "    if q.dim() == 4:\n" in ported["NPU425/nanogpt_causal"]
    assert '    if not kwargs.get("output_attentions"' in ported["NPU425/hf_eager"]
    prescaled = ported["NPU425/prescaled_padding"]
    assert '    return torch_npu.npu_fusion_attention(\n        q, k, v, q.shape[1], "BNSD",' in prescaled
    assert "k.repeat_interleave" not in prescaled  # (the original is gone: NPU-only)


def test_a_row_masked_entirely_is_zero_and_the_others_agree():
    """Left padding: the first query of the second sequence may attend to no key. The port asks for the op's
    invalid-row computation (inner_precise=2): that row is 0; every other row is what the eager code computes."""
    module = types.SimpleNamespace(num_key_value_groups=2, training=False)
    q, k, v = qkv((2, 4, 5, 8), (2, 2, 5, 8), torch.float32)
    allowed = (
        torch.ones(5, 5, dtype=torch.bool).tril()[None, None]
        & (torch.arange(5) >= torch.tensor([[0], [2]]))[:, None, None, :]
    )
    assert not allowed[1, 0, 0].any()  # (the row masked entirely)
    mask = hf_mask(allowed, torch.float32)
    outputs = []
    for text, side in ((_hf_case().input.read_text("utf-8"), "gpu"), (_hf_case().expected.read_text("utf-8"), "npu")):
        namespace: dict = {"__name__": "hf_eager"}
        with installed(side):
            exec(compile(on_npu_tensors(text), "hf_eager", "exec"), namespace)
            outputs.append(namespace["eager_attention_forward"](module, q, k, v, mask, 8**-0.5)[0])
    eager, fused = outputs  # (B, S, N, D)
    assert torch.equal(fused[1, :2], torch.zeros_like(fused[1, :2]))
    torch.testing.assert_close(fused[0], eager[0], **TOLERANCE[torch.float32])
    torch.testing.assert_close(fused[1, 2:], eager[1, 2:], **TOLERANCE[torch.float32])
