"""NPU427 (RoPE in complex numbers): the TODO's real-number form is the same rotation, forward and backward, and
the TODO follows the target release (no interleave mode before it had one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source

torch = pytest.importorskip("torch")

from ascend_port.emulate import ops  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def llama_complex(xq, freqs_cis):
    """Meta Llama's apply_rotary_emb on BSND q, freqs_cis (S, D/2) broadcast to (1, S, 1, D/2)."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return torch.view_as_real(xq_ * freqs_cis[None, :, None, :]).flatten(3).type_as(xq)


def tables(seq: int, dim: int) -> torch.Tensor:
    freqs = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    return torch.polar(torch.ones(seq, dim // 2), torch.outer(torch.arange(seq).float(), freqs))


@pytest.mark.parametrize("form", ["npu_rotary_mul", "plain_torch"])
def test_the_real_number_form_of_the_todo_is_the_same_rotation(form):
    freqs_cis = tables(5, 8)
    x = torch.randn(2, 5, 3, 8, generator=torch.Generator().manual_seed(0), requires_grad=True)
    cos = freqs_cis.real.repeat_interleave(2, -1)[None, :, None, :]  # 1S1D for a BSND x
    sin = freqs_cis.imag.repeat_interleave(2, -1)[None, :, None, :]
    if form == "npu_rotary_mul":
        real = ops.npu_rotary_mul(x, cos, sin, rotary_mode="interleave")
    else:
        real = x * cos + torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2) * sin
    x2 = x.detach().requires_grad_()
    complex_ = llama_complex(x2, freqs_cis)
    torch.testing.assert_close(real, complex_)
    g = torch.randn(real.shape, generator=torch.Generator().manual_seed(1))
    (gx,) = torch.autograd.grad(real, x, g)
    (gx2,) = torch.autograd.grad(complex_, x2, g)
    torch.testing.assert_close(gx, gx2)


def test_half_mode_is_not_that_rotation():
    """The rotation pairs neighbours (interleave), not the two halves: the default mode would be wrong."""
    freqs_cis = tables(5, 8)
    x = torch.randn(2, 5, 3, 8, generator=torch.Generator().manual_seed(0))
    cos = freqs_cis.real.repeat_interleave(2, -1)[None, :, None, :]
    sin = freqs_cis.imag.repeat_interleave(2, -1)[None, :, None, :]
    assert not torch.allclose(ops.npu_rotary_mul(x, cos, sin), llama_complex(x, freqs_cis))


def test_a_target_without_interleave_mode_gets_the_plain_torch_form():
    source = (GOLDEN / "NPU427/llama_complex.in.py").read_text("utf-8")
    old = port_source(source, Selection(), PortOptions(target="2.2.0.post2")).new_text
    assert old is not None and "npu_rotary_mul has no interleave mode" in old and "npu_rotary_mul(xq" not in old
    new = port_source(source, Selection(), PortOptions(target="2.14.0")).new_text
    assert new is not None and 'torch_npu.npu_rotary_mul(xq, cos, sin, rotary_mode="interleave")' in new
    # one per function: apply_rotary_emb rotates xq and xk alike, rotate_unflattened its one tensor
    assert new.count("TODO(ascend-port): NPU427") == 2 and "rotation of xk" not in new
