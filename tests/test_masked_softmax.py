"""NPU428 beyond the golden cases' fp32/bf16 runs (tests/test_numerical_equivalence.py): each fill it fuses, in fp32,
fp16 and bf16, forward and backward, against the emulator's strict reference of npu_scaled_masked_softmax, in both
--other-devices modes; the run-time test's fallback (an axis of 33, a padding mask, float64) runs the original code;
and the fill of -inf it leaves really differs (NaN against uniform)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fake_modules import installed, on_npu_tensors  # noqa: E402
from test_numerical_equivalence import GRAD_TOLERANCE, TOLERANCE  # noqa: E402

from ascend_port.core.options import PortOptions  # noqa: E402
from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.emulate import ops  # noqa: E402
from ascend_port.port.python import port_source  # noqa: E402

SOURCE = """
import torch
import torch.nn.functional as F


def attend(scores, mask, value):
    scores = scores.masked_fill(mask, {fill})
    return F.softmax(scores{cast}, dim=-1).to(value.dtype) @ value
"""
FILLS = {"op": "-10000.0", "minimum": "torch.finfo(scores.dtype).min", "literal": "-1e9"}
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def _ported(fill: str, cast: str = "", mode: str = "keep") -> tuple[str, str]:
    source = SOURCE.format(fill=fill, cast=cast)
    ported = port_source(source, Selection(select=("NPU428",)), PortOptions(other_devices=mode)).new_text
    assert ported is not None and "npu_scaled_masked_softmax" in ported
    return source, ported


def _inputs(dtype, shape=(2, 3, 32, 64), mask_shape=(2, 1, 32, 64), seed=0):
    generator = torch.Generator().manual_seed(seed)
    scores = (torch.randn(*shape, generator=generator) * 4).to(dtype).requires_grad_()
    mask = torch.rand(*mask_shape, generator=generator) < 0.5
    mask[..., 0, :] = True  # a fully masked row: uniform in the op and in the original
    value = torch.randn(*shape[:-2], shape[-1], 8, generator=generator).to(dtype).requires_grad_()
    return scores, mask, value


def _run(text: str, side: str, scores, mask, value, calls: list[str]):
    namespace: dict = {}
    with installed(side, calls):
        exec(compile(on_npu_tensors(text) if side == "npu" else text, "case", "exec"), namespace)
        s, v = scores.detach().clone().requires_grad_(), value.detach().clone().requires_grad_()
        out = namespace["attend"](s * 1, mask, v)  # (not a leaf: the code may mask it in place)
        grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(7)).to(out.dtype)
        out.backward(grad)
    return out, s.grad, v.grad


def _agree(expected, actual, dtype) -> None:
    out_e, *grads_e = expected
    out_a, *grads_a = actual
    assert out_a.dtype == out_e.dtype
    torch.testing.assert_close(out_a, out_e, **TOLERANCE[dtype])
    for e, a in zip(grads_e, grads_a):
        tolerance = dict(GRAD_TOLERANCE[dtype])
        tolerance["atol"] *= max(1.0, float(e.abs().max()))
        torch.testing.assert_close(a, e, **tolerance)


@pytest.mark.parametrize("mode", ["keep", "drop"])
@pytest.mark.parametrize("cast", ["", ".float()"], ids=["as_is", "float"])
@pytest.mark.parametrize("fill", FILLS, ids=list(FILLS))
@pytest.mark.parametrize("dtype", DTYPES.values(), ids=list(DTYPES))
def test_fused_softmax_computes_the_original(dtype, fill, cast, mode):
    if fill == "literal" and dtype is torch.float16:
        pytest.skip("-1e9 overflows float16: masked_fill raises in the original")
    source, ported = _ported(FILLS[fill], cast, mode)
    scores, mask, value = _inputs(dtype)
    calls: list[str] = []
    expected = _run(source, "gpu", scores, mask, value, [])
    actual = _run(ported, "npu", scores, mask, value, calls)
    assert calls == ["npu_scaled_masked_softmax"]
    _agree(expected, actual, dtype)


@pytest.mark.parametrize(
    "shape, mask_shape, dtype",
    [
        ((2, 3, 32, 33), (2, 1, 32, 33), torch.float32),  # an axis of 33: not a multiple of 32
        ((2, 3, 32, 64), (2, 1, 1, 64), torch.float32),  # a padding mask broadcast over the queries
        ((3, 32, 64), (3, 32, 64), torch.float32),  # 3-D scores
        ((2, 3, 32, 64), (2, 1, 32, 64), torch.float64),  # a dtype the op does not take
    ],
    ids=["axis_33", "padding_mask", "three_d", "float64"],
)
def test_shapes_the_op_does_not_take_run_the_original(shape, mask_shape, dtype):
    source, ported = _ported(FILLS["op"])
    scores, mask, value = _inputs(dtype, shape, mask_shape)
    calls: list[str] = []
    expected = _run(source, "gpu", scores, mask, value, [])
    actual = _run(ported, "npu", scores, mask, value, calls)
    assert calls == []
    for e, a in zip(expected, actual):
        torch.testing.assert_close(a, e, rtol=0, atol=0)


def test_the_reference_op_raises_on_the_shapes_the_test_keeps_from_it():
    """The run-time test is needed: the op itself rejects an axis of 33."""
    scores, mask, _ = _inputs(torch.float32, (2, 3, 32, 33), (2, 1, 32, 33))
    with pytest.raises(ops.OpContractError, match="W must be"):
        ops.npu_scaled_masked_softmax(scores, mask)


def test_a_fill_of_minus_infinity_differs_on_a_fully_masked_row():
    """Why NPU428 leaves -inf (NPU431 reports it): NaN in the original, uniform in the op; the other rows agree."""
    scores, mask, _ = _inputs(torch.float32)
    original = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    fused = ops.npu_scaled_masked_softmax(scores, mask)
    assert original[..., 0, :].isnan().all()
    torch.testing.assert_close(fused[..., 0, :], torch.full_like(fused[..., 0, :], 1 / 64))
    torch.testing.assert_close(fused[..., 1:, :], original[..., 1:, :])
    source = SOURCE.format(fill='float("-inf")', cast="")
    outcome = port_source(source, Selection(select=("NPU428", "NPU431")), PortOptions())
    assert outcome.new_text is None or outcome.new_text == source


@pytest.mark.parametrize("kept, agree", [(-9900.0, True), (-20000.0, False)], ids=["above_-9980", "below_-10000"])
def test_a_fill_below_the_ops_agrees_where_a_kept_score_is_above_minus_9980(kept, agree):
    """The limit of NPU428's medium confidence for a fill other than -10000 (the dtype's minimum): a masked key
    weighs exp(-10000 - max) against the row's largest kept score, nothing in float32 while max > -9980; a row whose
    kept scores all lie below -10000 is dominated by its masked keys in the op."""
    scores, mask, _ = _inputs(torch.float32)
    mask[..., 0, :] = False
    mask[..., 0, :32] = True
    scores = scores.detach().clone()
    scores[..., 0, 32:] += kept
    original = torch.softmax(scores.masked_fill(mask, torch.finfo(scores.dtype).min), dim=-1)
    fused = ops.npu_scaled_masked_softmax(scores, mask)
    assert torch.allclose(fused, original, **TOLERANCE[torch.float32]) is agree
    torch.testing.assert_close(fused[..., 1:, :], original[..., 1:, :])
