"""Issue 18 (part 2): the NPU505 optimizer port and the attention helper are right for training, against strict CPU
references of the originals (tests/apex_reference.py: apex FusedAdam/FusedSGD as their kernels compute, fp32 moments
and `step` per group; tests/gpu_reference.py: flash-attn, fp16/bf16 only) and of torch_npu (ascend_port/emulate/ops.py).

Tolerances, per dtype: optimizers after 5 steps, fp32 parameters, rtol 1e-5 / atol 1e-6 (the same update, rounded in
another order); attention forward and backward, fp16 rtol/atol 2e-3, bf16 rtol/atol 2e-2 (both sides compute in fp32
and round once; the backward of the reference flows through the same fp32 math).
"""

from __future__ import annotations

import sys
import types

import pytest

torch = pytest.importorskip("torch")

import apex_reference  # noqa: E402
import gpu_reference as gpu  # noqa: E402
import npu_reference as npu  # noqa: E402

from ascend_port.core.options import PortOptions  # noqa: E402
from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.emulate import optimizers as npu_optim  # noqa: E402
from ascend_port.port.handlers import handler_for  # noqa: E402
from ascend_port.rules.attention import helpers  # noqa: E402

STEPS = 5
OPTIM_TOLERANCE = dict(rtol=1e-5, atol=1e-6)
ATTENTION_TOLERANCE = {torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


# --- NPU505: apex optimizers -> torch.optim ----------------------------------------------------------------------


def port_source(source: str, tmp_path) -> str:
    path = tmp_path / "optim.py"
    path.write_text(source)
    result = handler_for(path).port(path.read_bytes(), Selection(), PortOptions())
    return result.new_text if result.new_text is not None else source


def build(source: str, monkeypatch, params):
    """Run a module's `build(params)` with the fake apex (the strict references) and a bare torch_npu."""
    monkeypatch.setitem(sys.modules, "torch_npu", types.ModuleType("torch_npu"))
    apex = types.ModuleType("apex")
    apex.optimizers = types.ModuleType("apex.optimizers")
    apex.optimizers.FusedAdam, apex.optimizers.FusedSGD = apex_reference.ApexFusedAdam, apex_reference.ApexFusedSGD
    monkeypatch.setitem(sys.modules, "apex", apex)
    monkeypatch.setitem(sys.modules, "apex.optimizers", apex.optimizers)
    namespace: dict = {}
    exec(compile(source, "optim.py", "exec"), namespace)
    return namespace["build"](params)


def train(make, dtype=torch.float32, steps=STEPS, grad_scale=1.0):
    """Parameters after ``steps`` steps of one small model's gradients (the same seeds on every call)."""
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(4, 3, generator=gen).to(dtype).requires_grad_(), torch.randn(3, generator=gen).to(dtype)]
    params[1].requires_grad_()
    optimizer = make(params)
    for _ in range(steps):
        x = torch.randn(5, 4, generator=gen).to(dtype)
        loss = ((x @ params[0] + params[1]).float().tanh() ** 2).sum() * grad_scale
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return [p.detach().float() for p in params], optimizer


CALLS = [
    "FusedAdam(params, lr=1e-2, betas=(0.9, 0.95))",
    "FusedAdam(params, lr=1e-2, weight_decay=0.1, bias_correction=True)",
    "FusedAdam(params, 1e-2, adam_w_mode=False, weight_decay=0.1)",
    "FusedSGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3)",
    "FusedSGD(params, lr=0.1, momentum=0.9, nesterov=True, set_grad_none=True)",
]


@pytest.mark.parametrize("call", CALLS)
def test_ported_optimizer_trains_as_apex(call, tmp_path, monkeypatch):
    name = call.split("(")[0]
    source = f"import torch\nfrom apex.optimizers import {name}\n\n\ndef build(params):\n    return {call}\n"
    ported = port_source(source, tmp_path)
    assert "torch.optim." in ported and "apex" not in ported, ported
    expected, _ = train(lambda p: build(source, monkeypatch, p))
    got, optimizer = train(lambda p: build(ported, monkeypatch, p))
    assert type(optimizer).__module__.startswith("torch.optim")
    for e, g in zip(expected, got, strict=True):
        torch.testing.assert_close(g, e, **OPTIM_TOLERANCE)


def test_module_with_half_parameters_keeps_apex(tmp_path):
    """apex keeps fp32 moments for fp16 parameters; torch.optim's would be fp16, and a small gradient's square
    underflows there (1e-4 ** 2 < fp16's smallest subnormal): the update differs by orders of magnitude."""
    source = (
        "import torch\nfrom apex.optimizers import FusedAdam\n\n\n"
        "def build(model):\n    model.half()\n    return FusedAdam(model.parameters(), lr=1e-3)\n"
    )
    ported = port_source(source, tmp_path)
    assert "return FusedAdam(model.parameters(), lr=1e-3)" in ported
    assert "NPU506 [low] apex FusedAdam" in ported and "fp16/bf16" in ported
    apex, apex_opt = train(lambda p: apex_reference.ApexFusedAdam(p, lr=1e-3), torch.float16, steps=2, grad_scale=1e-4)
    assert apex_opt.state[apex_opt.param_groups[0]["params"][0]]["exp_avg"].dtype == torch.float32
    native, native_opt = train(lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.0), torch.float16, 2, 1e-4)
    assert native_opt.state[native_opt.param_groups[0]["params"][0]]["exp_avg"].dtype == torch.float16
    assert not all(torch.allclose(a, n, rtol=1e-3, atol=1e-4) for a, n in zip(apex, native, strict=True))


def test_module_loading_an_optimizer_checkpoint_keeps_apex(tmp_path):
    """An apex checkpoint keeps `step` per param group: torch.optim's AdamW cannot step after loading it."""
    source = (
        "import torch\nfrom apex.optimizers import FusedAdam\n\n\n"
        "def build(params, state):\n    opt = FusedAdam(params, lr=1e-3)\n    opt.load_state_dict(state)\n"
        "    return opt\n"
    )
    ported = port_source(source, tmp_path)
    assert "opt = FusedAdam(params, lr=1e-3)" in ported and "KeyError 'step'" in ported
    _, apex_opt = train(lambda p: apex_reference.ApexFusedAdam(p, lr=1e-3), steps=2)
    state = apex_opt.state_dict()
    assert state["param_groups"][0]["step"] == 2 and "step" not in state["state"][0]
    params = [torch.zeros(4, 3, requires_grad=True), torch.zeros(3, requires_grad=True)]
    native = torch.optim.AdamW(params, lr=1e-3)
    with pytest.raises(KeyError, match="step"):  # (torch 2.13 raises in load_state_dict, older ones at step())
        native.load_state_dict(state)
        for p in params:
            p.grad = torch.ones_like(p)
        native.step()


def test_torch_npu_fused_optimizers_refuse_what_apex_allows():
    """Why NPU505 does not target torch_npu.optim.NpuFused*: set_to_none=True (accelerate's zero_grad) raises in
    its contract (ascend_port/emulate/optimizers.py; bf16 parameters and gradients reset to None are refused there
    too, see tests/test_emulate_optim.py), where apex FusedAdam accepts it."""
    p = torch.zeros(2, requires_grad=True)
    p.grad = torch.ones(2)
    apex_reference.ApexFusedAdam([p]).zero_grad(set_to_none=True)
    assert p.grad is None
    with pytest.raises(ValueError, match="set_to_none"):
        npu_optim.NpuFusedAdamW([p]).zero_grad(set_to_none=True)


# --- the attention helper ----------------------------------------------------------------------------------------


class _SavesMask(torch.autograd.Function):
    """torch_npu's npu_fusion_attention saves atten_mask for its backward (op-plugin's FlashAttentionScoreGrad takes
    it): saving an inference tensor outside inference mode raises, as on the device."""

    @staticmethod
    def forward(ctx, out, mask):
        if mask is not None:
            ctx.save_for_backward(mask)
        return out.view_as(out)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def fusion_attention(*args, atten_mask=None, **kwargs):
    out = npu.npu_fusion_attention(*args, atten_mask=atten_mask, **kwargs)
    return (_SavesMask.apply(out[0], atten_mask), *out[1:])


def helper(backend="torch_npu", mindiesd_calls=None):
    """The helper as the port writes it, on the CPU references (a fresh mask cache each time)."""
    source = helpers.helper_source(helpers.FLASH_HELPER, "torch", "torch_npu", backend, "test")
    fake_npu = types.SimpleNamespace(npu_fusion_attention=fusion_attention)
    namespace = {"torch": torch, "torch_npu": fake_npu}
    exec(compile(source, "helper.py", "exec"), namespace)
    if mindiesd_calls is not None:
        mindiesd = types.ModuleType("mindiesd")

        def attention_forward(q, k, v, scale=None, **kwargs):
            mindiesd_calls.append(scale)
            return npu.mindiesd_attention_forward(q, k, v, scale=scale, **kwargs)

        mindiesd.attention_forward = attention_forward
        sys.modules["mindiesd"] = mindiesd
    return namespace[helpers.FLASH_HELPER]


def leaves(*shapes, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=gen).to(dtype).requires_grad_() for s in shapes]


def forward_backward(fn, tensors):
    with gpu.strict_dtypes():  # flash-attn's own dtypes only
        out = fn(*tensors)
    out.float().pow(2).sum().backward()
    return out.detach().float(), [t.grad.float() for t in tensors]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_helper_trains_after_an_inference_mode_first_call(dtype):
    attn = helper()
    q, k, v = leaves((2, 6, 4, 8), (2, 6, 2, 8), (2, 6, 2, 8), dtype=dtype)
    with torch.inference_mode():  # validation or sampling first: the cached mask is made here
        attn(q.detach(), k.detach(), v.detach(), causal=True)
    got = forward_backward(lambda *t: attn(*t, causal=True), (q, k, v))
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    expected = forward_backward(lambda *t: gpu.flash_attn_func(*t, causal=True), (q2, k2, v2))
    torch.testing.assert_close(got[0], expected[0], **ATTENTION_TOLERANCE[dtype])
    for g, e in zip(got[1], expected[1], strict=True):
        torch.testing.assert_close(g, e, **ATTENTION_TOLERANCE[dtype])


def test_the_old_helper_failed_after_an_inference_mode_first_call():
    """The reproduction of the defect: the mask made under inference mode cannot be saved for backward."""
    q, k, v = leaves((1, 4, 2, 8), (1, 4, 2, 8), (1, 4, 2, 8), dtype=torch.float16)
    with torch.inference_mode():
        mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        fusion_attention(q, k, v, 2, "BSND", scale=0.3, atten_mask=mask, sparse_mode=3)[0].sum().backward()


def test_flash_attn_reference_rejects_fp32():
    q = torch.zeros(1, 2, 1, 8)
    with gpu.strict_dtypes(), pytest.raises(RuntimeError, match="fp16 and bf16"):
        gpu.flash_attn_func(q, q, q)


def test_varlen_over_1024_sequences_is_split():
    """The documented limit: at most 1024 sequences per npu_fusion_attention call (the op is stubbed: the
    references would take a minute over 1100 sequences; the next test checks the values on a smaller limit)."""
    cu = torch.arange(0, 2 * 1100 + 1, 2, dtype=torch.int32)
    q = torch.zeros(2200, 2, 8, dtype=torch.float16)
    calls = []

    def stub(q, k, v, head_num, layout, **kwargs):
        calls.append((len(kwargs["actual_seq_qlen"]), q.shape[0], kwargs["actual_seq_qlen"][-1]))
        return (q * 0 + 1,)

    attn = helper()
    attn.__globals__["torch_npu"] = types.SimpleNamespace(npu_fusion_attention=stub)
    assert attn(q, q[:, :1], q[:, :1], cu_seqlens_q=cu, cu_seqlens_k=cu).shape == q.shape
    assert calls == [(1024, 2048, 2048), (76, 152, 152)]  # each chunk's cumulative ends start again at 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_varlen_split_trains_as_flash_attn(dtype):
    """The split on a limit of 4 sequences (the helper's text with 1024 -> 4), forward and backward."""
    source = helpers.helper_source(helpers.FLASH_HELPER, "torch", "torch_npu", "torch_npu", "test")
    assert "len(cu_seqlens_q) > 1025" in source and "range(0, len(cu_seqlens_q) - 1, 1024)" in source
    namespace = {"torch": torch, "torch_npu": types.SimpleNamespace(npu_fusion_attention=fusion_attention)}
    exec(compile(source.replace("1025", "5").replace("1024", "4"), "helper.py", "exec"), namespace)
    attn = namespace[helpers.FLASH_HELPER]
    lengths = [1, 3, 2, 4, 1, 2, 3, 2, 5, 1]
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)
    total = int(cu[-1])
    q, k, v = leaves((total, 2, 8), (total, 1, 8), (total, 1, 8), dtype=dtype)
    got = forward_backward(lambda *t: attn(*t, cu_seqlens_q=cu, cu_seqlens_k=cu, causal=True), (q, k, v))
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    expected = forward_backward(lambda *t: gpu.flash_attn_varlen_func(*t, cu, cu, 5, 5, causal=True), (q2, k2, v2))
    torch.testing.assert_close(got[0], expected[0], **ATTENTION_TOLERANCE[dtype])
    for g, e in zip(got[1], expected[1], strict=True):
        torch.testing.assert_close(g, e, **ATTENTION_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("window_size", [(-1, -1), (2, 0)])
def test_fully_masked_rows_are_zeros_as_in_flash_attn(dtype, window_size):
    """Bottom-right causal with more queries than keys: the first rows see no key; flash-attn writes 0 there (and
    their gradient is 0), npu_fusion_attention documents nothing, so the helper leaves them out of the op's call."""
    q, k, v = leaves((2, 7, 4, 8), (2, 4, 2, 8), (2, 4, 2, 8), dtype=dtype)
    attn = helper()
    got = forward_backward(lambda *t: attn(*t, causal=True, window_size=window_size), (q, k, v))
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    expected = forward_backward(lambda *t: gpu.flash_attn_func(*t, causal=True, window_size=window_size), (q2, k2, v2))
    assert not got[0][:, :3].any()
    torch.testing.assert_close(got[0], expected[0], **ATTENTION_TOLERANCE[dtype])
    for g, e in zip(got[1], expected[1], strict=True):
        torch.testing.assert_close(g, e, **ATTENTION_TOLERANCE[dtype])


def test_fully_masked_varlen_rows_are_refused():
    attn = helper()
    cu_q, cu_k = torch.tensor([0, 3, 6], dtype=torch.int32), torch.tensor([0, 2, 6], dtype=torch.int32)
    q, kv = torch.zeros(6, 2, 8, dtype=torch.float16), torch.zeros(6, 2, 8, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match="fully masked"):  # a sequence with 3 queries and 2 keys
        attn(q, kv, kv, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=True)


def test_mindiesd_only_for_calls_without_backward_and_with_a_float_scale(monkeypatch):
    monkeypatch.delitem(sys.modules, "mindiesd", raising=False)
    calls: list = []
    attn = helper("mindiesd", calls)
    try:
        q, k, v = leaves((1, 4, 2, 8), (1, 4, 2, 8), (1, 4, 2, 8), dtype=torch.float16)
        forward_backward(attn, (q, k, v))  # training: npu_fusion_attention, which has a backward
        assert calls == []
        with torch.no_grad():
            attn(q, k, v)
            attn(q, k, v, softmax_scale=1)  # an int scale: MindIE-SD rejects it
        assert len(calls) == 1 and isinstance(calls[0], float)
    finally:
        sys.modules.pop("mindiesd", None)
