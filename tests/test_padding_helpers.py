"""NPU410's helpers against flash_attn.bert_padding's semantics, on CPU torch.

The references below restate what flash-attn's functions compute (torch.gather/scatter along the flattened batch
and sequence axes, in its own formulation, not its code): the helpers, written as the port writes them into a
module, must give the same values, dtypes and gradients, for both unpad_input result shapes (4 values before
flash-attn 2.7, 5 since).
"""

from __future__ import annotations

import pytest

from ascend_port.rules.attention.helper_names import PADDING_HELPERS
from ascend_port.rules.attention.helpers import helper_source

torch = pytest.importorskip("torch", reason="pip install torch==2.13.0 (CPU) to run the numerical-equivalence tests")


def _helpers(torch_name: str | None) -> dict:
    """The four helpers, executed as the port writes them (``torch_name`` None: the module lacks `import torch`)."""
    namespace: dict = {"torch": torch} if torch_name else {}
    for name in PADDING_HELPERS:
        exec(helper_source(name, torch_name, "torch_npu", "torch_npu", "rule NPU410"), namespace)
    return namespace


# --- reference semantics ------------------------------------------------------------------------------------------


def ref_index_first_axis(x, indices):
    flat = x.reshape(x.shape[0], -1)
    picked = torch.gather(flat, 0, indices[:, None].expand(-1, flat.shape[1]))
    return picked.reshape(-1, *x.shape[1:])


def ref_index_put_first_axis(values, indices, n):
    out = torch.zeros((n, *values.shape[1:]), dtype=values.dtype, device=values.device)
    flat = out.reshape(n, -1).scatter(
        0, indices[:, None].expand(-1, values[0].numel()), values.reshape(len(indices), -1)
    )
    return flat.reshape(n, *values.shape[1:])


def ref_unpad_input(x, mask, unused_mask=None, five=True):
    every = mask if unused_mask is None else mask + unused_mask
    lengths = every.sum(-1).to(torch.int32)
    indices = every.reshape(-1).nonzero().reshape(-1)
    cu = torch.cat([torch.zeros(1, dtype=torch.int32), lengths.cumsum(0).to(torch.int32)])
    out = (ref_index_first_axis(x.reshape(-1, *x.shape[2:]), indices), indices, cu, int(lengths.max()))
    return (*out, mask.sum(-1).to(torch.int32)) if five else out


def ref_pad_input(x, indices, batch, seqlen):
    return ref_index_put_first_axis(x, indices, batch * seqlen).reshape(batch, seqlen, *x.shape[1:])


# --- tests --------------------------------------------------------------------------------------------------------


def _batch(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 7, 4, 5, generator=gen)
    lengths = torch.tensor([7, 2, 5])
    mask = torch.arange(7)[None, :] < lengths[:, None]
    return x, mask


def _same(a, b) -> None:
    assert type(a) is type(b) or not isinstance(a, torch.Tensor)
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("torch_name", ["torch", None])
def test_unpad_and_pad_match_flash_attn(torch_name) -> None:
    h = _helpers(torch_name)
    x, mask = _batch()
    got = h["_npu_unpad_input"](x, mask)
    want = ref_unpad_input(x, mask)
    assert len(got) == 5
    for a, b in zip(got, want):
        _same(a, b)
    # flash-attn < 2.7's four values are the port's `[:4]`
    for a, b in zip(got[:4], ref_unpad_input(x, mask, five=False)):
        _same(a, b)
    tokens, indices = got[0], got[1]
    _same(h["_npu_pad_input"](tokens * 2, indices, 3, 7), ref_pad_input(tokens * 2, indices, 3, 7))
    assert torch.equal(h["_npu_pad_input"](tokens, indices, 3, 7), x * mask[..., None, None])


def test_unused_mask_counts_in_lengths_not_in_used() -> None:
    h = _helpers("torch")
    x, mask = _batch(1)
    unused = torch.zeros_like(mask)
    unused[1, 2:4] = True
    for a, b in zip(h["_npu_unpad_input"](x, mask, unused), ref_unpad_input(x, mask, unused)):
        _same(a, b)


def test_index_helpers_and_gradients() -> None:
    h = _helpers("torch")
    x = torch.randn(10, 3, 2, requires_grad=True)
    indices = torch.tensor([7, 0, 3, 4])
    _same(h["_npu_index_first_axis"](x, indices), ref_index_first_axis(x, indices))
    values = torch.randn(4, 3, 2, dtype=torch.float64, requires_grad=True)
    _same(h["_npu_index_put_first_axis"](values, indices, 10), ref_index_put_first_axis(values, indices, 10))
    for helper, ref, arg in (
        ("_npu_index_first_axis", ref_index_first_axis, x),
        ("_npu_index_put_first_axis", ref_index_put_first_axis, values),
    ):
        extra = () if helper == "_npu_index_first_axis" else (10,)
        (grad,) = torch.autograd.grad(h[helper](arg, indices, *extra).square().sum(), arg)
        (want,) = torch.autograd.grad(ref(arg, indices, *extra).square().sum(), arg)
        assert torch.allclose(grad, want)
