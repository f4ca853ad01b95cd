"""Issue 18 (part 1): the norm and rotary rewrites (NPU420, NPU421, NPU422, NPU305, NPU424) are right for training
too: forward AND backward, with mixed (input, weight) dtypes and under autocast, original on the GPU-side references
(tests/gpu_reference.py, plain torch) against the port on the strict NPU references (ascend_port/emulate/ops.py).

Tolerances per dtype (forward and gradients, compared in float32): fp32 rtol 1e-4 / atol 1e-5 (both sides compute
in fp32; only the order of reductions differs); bf16 rtol/atol 2**-6 and fp16 rtol/atol 2**-8, relative to the
tensor's largest element for the gradients (the lower-precision input rounds once on the port and up to four times
in the original's eager ops, see GRAD_TOLERANCE in tests/test_numerical_equivalence.py). Under autocast (NPU305,
NPU423, NPU424) the autocast dtype's tolerance applies.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="pip install torch==2.13.0 (CPU) to run the numerical tests")

from fake_modules import NPU_TEST, installed, on_npu_tensors  # noqa: E402

from ascend_port.core.options import PortOptions  # noqa: E402
from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.emulate import ops  # noqa: E402
from ascend_port.port.python import port_source  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
TOLERANCE = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.bfloat16: dict(rtol=2**-6, atol=2**-6),
    torch.float16: dict(rtol=2**-8, atol=2**-8),
}


def load(case: str, ported: bool) -> dict:
    """The namespace of golden/<case>.in.py (GPU side) or .out.py (NPU side: the fake torch_npu runs the strict
    references)."""
    path = GOLDEN / f"{case}.{'out' if ported else 'in'}.py"
    text = path.read_text("utf-8")
    if ported:
        # The port keeps the original computation for other devices' tensors (`if x.device.type == "npu"`): here
        # the CPU tensors stand for NPU ones, so that the fused ops are what runs (and what is compared).
        assert NPU_TEST in text or "torch_npu.npu_" not in text, f"{case}: a fused op without a dispatch"
        text = on_npu_tensors(text)
    namespace: dict = {"__name__": case.replace("/", "_")}
    with installed("npu" if ported else "gpu"):
        exec(compile(text, str(path), "exec"), namespace)
    return namespace


def close(actual: torch.Tensor, expected: torch.Tensor, dtype, scale: bool = False, what: str = "") -> None:
    tolerance = dict(TOLERANCE[dtype])
    if scale:
        tolerance["atol"] *= max(1.0, float(expected.detach().abs().max()))
    torch.testing.assert_close(
        actual.detach().float(), expected.detach().float(), **tolerance, msg=lambda m: f"{what}: {m}"
    )


def run_norm(namespace: dict, cls: str, x_dtype, w_dtype, seed=1):
    """(output, d/dx, d/dweight) of a norm class of 16 features on a (2, 3, 16) input, random weights."""
    module = namespace[cls](16)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(seed)) * 0.5)
    module = module.to(w_dtype)
    x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(seed + 1)).to(x_dtype).requires_grad_()
    out = module(x)
    cotangent = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed + 2)).to(out.dtype)
    dx, dw = torch.autograd.grad(out, [x, module.weight], cotangent, allow_unused=True)
    return out, dx, dw


# --- NPU420, NPU421: mixed dtypes, forward and backward -----------------------------------------------------------

NORMS = [
    ("NPU420/hf_llama", "LlamaRMSNorm"),
    ("NPU420/meta_llama", "RMSNorm"),
    ("NPU420/t5", "T5LayerNorm"),
    ("NPU420/dtype_contract", "Float32RMSNorm"),
    ("NPU420/dtype_contract", "CastBackRMSNorm"),
    ("NPU421/gemma", "GemmaRMSNorm"),
]
# (input, weight) dtypes: a model cast to one dtype, activations in half precision with fp32 weights (autocast,
# mixed-precision training: HF's q/k norms), and an fp32 input with a bf16 weight, which npu_rms_norm rejects as a
# pair: the port passes it a float32 gamma
PAIRS = [
    (torch.float32, torch.float32),
    (torch.bfloat16, torch.bfloat16),
    (torch.bfloat16, torch.float32),
    (torch.float16, torch.float32),
    (torch.float32, torch.bfloat16),
]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{str(p[0])[6:]}-{str(p[1])[6:]}")
@pytest.mark.parametrize("case, cls", NORMS, ids=[f"{c}:{k}" for c, k in NORMS])
def test_norm_port_trains_like_the_original(case, cls, pair):
    """Same values, same gradients for x AND the weight (NPU421: npu_gemma_rms_norm has no backward, the port must
    not use it), and the original's result dtype: float32 for a module that returns it on purpose, the weight's for
    T5, and for HF's `weight * x.to(input_dtype)` the dtype the two promote to (float32 for a bf16 x and an fp32
    weight)."""
    x_dtype, w_dtype = pair
    expected = run_norm(load(case, False), cls, x_dtype, w_dtype)
    actual = run_norm(load(case, True), cls, x_dtype, w_dtype)
    assert actual[0].dtype == expected[0].dtype, (actual[0].dtype, expected[0].dtype)
    low = x_dtype if x_dtype != torch.float32 else w_dtype
    close(actual[0], expected[0], low, what="output")
    for name, a, e in zip(("x", "weight"), actual[1:], expected[1:]):
        assert a is not None and e is not None, f"no gradient for {name}"
        assert a.dtype == e.dtype
        close(a, e, low, scale=True, what=f"d/d{name}")


def test_hf_norm_port_keeps_the_promoted_dtype():
    """The defect the cast fixes: the op returns x's dtype (bf16), where HF's form promotes with an fp32 weight."""
    namespace = load("NPU420/hf_llama", True)
    assert "torch.promote_types(hidden_states.dtype, self.weight.dtype)" in (
        GOLDEN / "NPU420/hf_llama.out.py"
    ).read_text("utf-8")
    module = namespace["LlamaRMSNorm"](16)
    x = torch.randn(2, 16, dtype=torch.bfloat16)
    assert ops.npu_rms_norm(x, module.weight.float())[0].dtype == torch.bfloat16
    assert module(x).dtype == torch.float32
    assert module.to(torch.bfloat16)(x).dtype == torch.bfloat16


def test_norm_port_of_a_pair_the_op_rejects_passes_a_float32_gamma():
    """(fp32 x, bf16 weight) is not a pair npu_rms_norm takes (the strict reference raises as the device would); the
    ported HF form passes `self.weight.float()`, so it runs and returns float32 as the original."""
    with pytest.raises(ops.OpTypeError, match="dtypes"):
        ops.npu_rms_norm(torch.randn(2, 16), torch.ones(16, dtype=torch.bfloat16))
    out, dx, dw = run_norm(load("NPU420/hf_llama", True), "LlamaRMSNorm", torch.float32, torch.bfloat16)
    assert out.dtype == torch.float32 and dx is not None and dw is not None and dw.dtype == torch.bfloat16


def test_gemma_op_has_no_gradient_and_the_port_does_not_use_it():
    """The strict reference of npu_gemma_rms_norm gives no gradient (op-plugin has no backward for it), so a port
    through it would be caught above; the golden port goes through npu_rms_norm on (1 + weight)."""
    x, w = torch.randn(2, 16, requires_grad=True), torch.zeros(16, requires_grad=True)
    with pytest.warns(UserWarning, match="no backward"):
        y, _ = ops.npu_gemma_rms_norm(x, w)
    assert not y.requires_grad
    assert "npu_gemma_rms_norm" not in (GOLDEN / "NPU421/gemma.out.py").read_text("utf-8")


# --- NPU422: mixed dtypes, the interleaved form, the documented limits ----------------------------------------------


def tables(positions: int, dim: int, scale: float = 1.0):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    emb = torch.cat([torch.outer(torch.arange(positions).float(), inv_freq)] * 2, dim=-1)
    return (emb.cos() * scale).requires_grad_(), (emb.sin() * scale).requires_grad_()


@pytest.mark.parametrize("q_dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["fp32", "bf16", "fp16"])
def test_rotary_port_trains_with_fp32_tables(q_dtype):
    """q/k in the activations' dtype with fp32 tables (HF under autocast): the op casts the tables to q's dtype and
    returns q's dtype, where the eager sum promoted to fp32 (documented in NPU422); values and the gradients of q, k
    and the tables agree within q's rounding."""
    positions = torch.tensor([[0, 1, 2, 3, 4], [2, 3, 4, 5, 6]])
    results = []
    for ported in (False, True):
        namespace = load("NPU422/hf_rotary", ported)
        gen = torch.Generator().manual_seed(0)
        q = torch.randn(2, 4, 5, 8, generator=gen).to(q_dtype).requires_grad_()
        k = torch.randn(2, 2, 5, 8, generator=gen).to(q_dtype).requires_grad_()
        cos, sin = tables(7, 8)
        q_out, k_out = namespace["apply_rotary_pos_emb"](q, k, cos[positions], sin[positions])
        loss = (q_out.float() * torch.linspace(-1, 1, 8)).sum() + (k_out.float() ** 2).sum()
        results.append((q_out, k_out, *torch.autograd.grad(loss, [q, k, cos, sin])))
    (eq, ek, *egrads), (aq, ak, *agrads) = results
    assert aq.dtype == q_dtype and eq.dtype == torch.promote_types(q_dtype, torch.float32)
    for a, e, what in ((aq, eq, "q"), (ak, ek, "k")):
        close(a, e, q_dtype, what=what)
    for a, e, what in zip(agrads, egrads, ("dq", "dk", "dcos", "dsin")):
        assert a.dtype == e.dtype, what
        close(a, e, q_dtype, scale=True, what=what)


def test_half_mode_on_an_interleaved_rotate_half_is_wrong():
    """Why NPU422 refuses Cohere's/GLM's rotate_half: the op's half mode on an interleaved original is off by O(1);
    its interleave mode (11SD tables only) is the same function."""
    x = torch.randn(1, 2, 5, 8, generator=torch.Generator().manual_seed(3))
    cos, sin = (t.detach()[None, None] for t in tables(5, 8))
    # Cohere: interleaved pairs, and tables repeated per pair (repeat_interleave) instead of per half
    cos_i, sin_i = (torch.repeat_interleave(t[..., :4], 2, dim=-1) for t in (cos, sin))
    rotated = torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)
    original = x * cos_i + rotated * sin_i
    assert (ops.npu_rotary_mul(x, cos_i, sin_i) - original).abs().max() > 0.5
    torch.testing.assert_close(ops.npu_rotary_mul(x, cos_i, sin_i, rotary_mode="interleave"), original)


def test_rotary_reference_takes_scaled_tables_and_rejects_large_batches():
    """Tables scaled above 1 (YaRN's mscale) are taken, as the real op takes them (NPU422 still leaves such a module
    with a TODO); B and N < 1000 is a documented limit."""
    x = torch.randn(1, 2, 5, 8)
    cos, sin = (t.detach()[None, None] for t in tables(5, 8, scale=1.2))
    assert cos.abs().max() > 1.0
    x1, x2 = x.chunk(2, dim=-1)
    torch.testing.assert_close(ops.npu_rotary_mul(x, cos, sin), cos * x + sin * torch.cat((-x2, x1), dim=-1))
    assert "TODO(ascend-port): NPU422" in (GOLDEN / "NPU422/scaled_tables.out.py").read_text("utf-8")
    with pytest.raises(ops.OpContractError, match="below 1000"):
        ops.npu_rotary_mul(torch.zeros(1000, 1000, 1, 2), torch.ones(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))


# --- NPU305, NPU424 under autocast ---------------------------------------------------------------------------------


def block(namespace: dict, cls: str = "Block"):
    module = namespace[cls](16)
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(10 + i)) * 0.5)
    return module


def test_npu_autocast_runs_layer_norm_in_float32():
    """The emulation of torch_npu's autocast lists: layer_norm in fp32 (CPU autocast would keep bf16), linear in
    the autocast dtype."""
    x = torch.randn(2, 16, dtype=torch.bfloat16)
    with ops.npu_autocast(torch.bfloat16):
        assert torch.nn.functional.layer_norm(x, (16,)).dtype == torch.float32
        assert torch.nn.LayerNorm(16)(x).dtype == torch.float32
        assert torch.nn.Linear(16, 16)(x.float()).dtype == torch.bfloat16
    assert "layer_norm" in ops.NPU_AUTOCAST_FP32


@pytest.mark.parametrize("case", ["NPU305/layernorm_upcast", "NPU305/autocast_keeps_dtype"])
def test_layernorm_upcast_port_keeps_the_dtype_under_autocast(case):
    """`norm(x.float()).type_as(x)` -> `norm(x).type_as(x)`: under torch_npu's autocast layer_norm returns fp32, and
    the kept cast back gives x's dtype as the original; forward and backward agree."""
    results = []
    for ported in (False, True):
        namespace = load(case, ported)
        if case.endswith("autocast_keeps_dtype"):  # the module enters autocast itself: the emulation instead
            source = (GOLDEN / f"{case}.{'out' if ported else 'in'}.py").read_text("utf-8")
            source = source.replace('torch.autocast("cuda", ', "npu_autocast(").replace(
                'torch.autocast("npu", ', "npu_autocast("
            )
            namespace = {"__name__": "case", "npu_autocast": ops.npu_autocast}
            with installed("npu" if ported else "gpu"):
                exec(compile(source, case, "exec"), namespace)
        module = block(namespace)
        x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(0)).requires_grad_()
        with ops.npu_autocast(torch.bfloat16):
            out = module(x)
        results.append((out, *torch.autograd.grad(out.float().pow(2).sum(), [x, *module.parameters()])))
    (expected, *egrads), (actual, *agrads) = results
    assert actual.dtype == expected.dtype
    close(actual, expected, torch.bfloat16, what="output")
    for a, e in zip(agrads, egrads):
        close(a, e, torch.bfloat16, scale=True, what="gradient")


def test_layernorm_upcast_port_without_the_cast_back_would_change_the_dtype():
    """The defect the kept cast fixes: `self.norm(x)` alone is float32 under torch_npu's autocast."""
    namespace = load("NPU305/layernorm_upcast", True)
    module = block(namespace)
    x = torch.randn(2, 3, 16, dtype=torch.bfloat16)
    with ops.npu_autocast(torch.bfloat16):
        assert module.norm(x).dtype == torch.float32
        assert module.norm(x).type_as(x).dtype == torch.bfloat16


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_apex_norm_swap_keeps_the_dtype_under_autocast(dtype):
    """apex casts input and weight to the autocast dtype and returns it; torch.nn.LayerNorm returns float32 under
    torch_npu's autocast (and RMSNorm from a float32 input): the subclasses the port writes cast the result to the
    autocast dtype. Each norm on its own and the chain, forward and backward (x and every parameter)."""
    results = []
    for ported in (False, True):
        module = block(load("NPU424/apex_norms", ported))
        x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(0)).requires_grad_()
        with ops.npu_autocast(dtype):
            outs = [module(x), module.attn_norm(x), module.mlp_norm(x), module.final_norm(x)]
            if ported:  # the defect: torch.nn.LayerNorm itself returns float32 here
                assert torch.nn.LayerNorm(16)(x).dtype == torch.float32
        loss = sum((o.float() * torch.linspace(-1, 1, 16)).pow(2).sum() for o in outs)
        results.append((outs, torch.autograd.grad(loss, [x, *module.parameters()])))
    (expected, egrads), (actual, agrads) = results
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype == dtype
        close(a, e, dtype, what="output")
    for a, e in zip(agrads, egrads):
        assert a.dtype == e.dtype
        close(a, e, dtype, scale=True, what="gradient")


def test_apex_norm_swap_is_torch_nn_outside_autocast():
    """Outside autocast the subclasses compute what torch.nn's norms compute, in the input's dtype, as apex."""
    ported, original = block(load("NPU424/apex_norms", True)), block(load("NPU424/apex_norms", False))
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(1)).to(dtype)
        a, e = ported.to(dtype)(x), original.to(dtype)(x)
        assert a.dtype == e.dtype == dtype
        close(a, e, dtype, what=str(dtype))


def test_apex_norm_swap_for_a_torch_before_2_4(monkeypatch):
    """An older target (torch_npu 2.1: torch 2.1) has no per-device autocast API and no torch.nn.RMSNorm: the
    LayerNorm subclass reads torch.npu's autocast state (torch_npu's, NPU only, as apex reads CUDA's), and the
    RMSNorm is a module of its own on torch_npu.npu_rms_norm for npu tensors, apex's formula for others (was: the
    import kept, None where apex is missing, and a TODO)."""
    source = (GOLDEN / "NPU424/apex_norms.in.py").read_text("utf-8")
    ported = port_source(source, Selection(), PortOptions(target="2.1.0.post17")).new_text
    assert ported is not None and "TODO(ascend-port): NPU424" not in ported and "apex" not in ported.split("class")[0]
    assert "class _NpuRMSNorm(torch.nn.Module):" in ported and "torch_npu.npu_rms_norm(" in ported
    assert "if torch.npu.is_autocast_enabled():" in ported
    assert "return output.to(torch.npu.get_autocast_dtype())" in ported
    npu = types.SimpleNamespace(
        is_autocast_enabled=lambda: torch.is_autocast_enabled("cpu"),
        get_autocast_dtype=lambda: torch.get_autocast_dtype("cpu"),
    )
    monkeypatch.setattr(torch, "npu", npu, raising=False)
    norms = {}
    for on_npu in (False, True):  # apex's formula on other devices' tensors; npu_rms_norm on the npu's
        namespace: dict = {"__name__": "old_target"}
        with installed("both"):
            exec(compile(on_npu_tensors(ported) if on_npu else ported, "old_target", "exec"), namespace)
        norms[on_npu] = namespace
    layer_norm = norms[True]["_NpuLayerNorm"](16)
    x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(3))
    with ops.npu_autocast(torch.bfloat16):
        assert layer_norm(x).dtype == torch.bfloat16
    assert layer_norm(x).dtype == torch.float32
    weight = torch.randn(16, generator=torch.Generator().manual_seed(4))
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight  # apex's manual_rms_norm
    for on_npu, namespace in norms.items():
        rms = namespace["_NpuRMSNorm"](16, eps=1e-5)
        assert [name for name, _ in rms.named_parameters()] == ["weight"]  # apex's parameter: checkpoints load
        with torch.no_grad():
            rms.weight.copy_(weight)
        close(rms(x), expected, torch.float32, what=f"on the npu: {on_npu}")
        if on_npu:
            with ops.npu_autocast(torch.bfloat16):
                assert rms(x).dtype == torch.bfloat16


# --- NPU302: the table computed in float64 on the CPU, cast once ---------------------------------------------------


def test_cpu_rotary_table_is_cast_once():
    """At 128k positions the lowered intermediates drift by 7.7e-3 (cos/sin of angles up to 1.3e5 rad in fp32);
    the port keeps them in float64 on the CPU and casts the finished table once: one float32 rounding (3e-8)."""
    case = "NPU302/cpu_table_cast_once"
    original = (GOLDEN / f"{case}.in.py").read_text("utf-8")
    every_fp64_lowered = original.replace("torch.float64", "torch.float32").replace(".double()", ".float()")
    namespaces = [{}, load(case, True), {}]
    exec(compile(original, case, "exec"), namespaces[0])
    exec(compile(every_fp64_lowered, case, "exec"), namespaces[2])
    reference, ported, lowered = (ns["rope_cos_sin"](128, 131072) for ns in namespaces)
    for ref, port, low in zip(reference, ported, lowered):
        assert ref.dtype == torch.float64 and port.dtype == low.dtype == torch.float32
        assert float((port.double() - ref).abs().max()) < 1e-7
        assert float((low.double() - ref).abs().max()) > 1e-3


# --- NPU423 under autocast ------------------------------------------------------------------------------------------


def test_swiglu_port_trains_like_the_original_under_autocast():
    """fp32 parameters and input under torch_npu's autocast: the projections run in bf16, so npu_swiglu gets bf16
    halves (the original's silu and product run in bf16 too); output dtype, values and every gradient agree."""
    results = []
    for ported in (False, True):
        namespace = load("NPU423/swiglu", ported)
        module = namespace["FusedMLP"](8, 6)
        with torch.no_grad():
            for i, p in enumerate(module.parameters()):
                p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(20 + i)) * 0.5)
        x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0)).requires_grad_()
        with ops.npu_autocast(torch.bfloat16):
            out = module(x)
        results.append((out, *torch.autograd.grad(out.float().pow(2).sum(), [x, *module.parameters()])))
    (expected, *egrads), (actual, *agrads) = results
    assert actual.dtype == expected.dtype == torch.bfloat16
    close(actual, expected, torch.bfloat16, what="output")
    for a, e in zip(agrads, egrads):
        assert a.dtype == e.dtype
        close(a, e, torch.bfloat16, scale=True, what="gradient")


# --- other devices: the original computation, bit for bit, where torch_npu is not installed --------------------------


def test_the_fused_ports_keep_cpu_tensors_on_the_original_computation():
    """A project that keeps its other devices (the default) runs its own tests on CPU: the ported RMSNorm, rotary
    and SwiGLU take the original computation for CPU tensors (bit for bit, no fused op called), and the module
    imports where torch_npu is not installed (its import is guarded)."""
    calls: list[str] = []
    sides = []
    for ported in (False, True):
        path = GOLDEN / f"{{}}.{'out' if ported else 'in'}.py"
        spaces = {}
        # the GPU side's fakes only (flash-attn and the like), torch_npu blocked: a CPU-only host
        with installed("gpu", calls):
            for case in ("NPU420/hf_llama", "NPU422/hf_rotary", "NPU423/swiglu"):
                namespace: dict = {"__name__": case.replace("/", "_")}
                exec(compile(Path(str(path).format(case)).read_text("utf-8"), case, "exec"), namespace)
                spaces[case] = namespace
        gen = torch.Generator().manual_seed(0)
        norm = spaces["NPU420/hf_llama"]["LlamaRMSNorm"](8)
        x = torch.randn(2, 3, 8, generator=gen)
        q, k = torch.randn(2, 4, 5, 8, generator=gen), torch.randn(2, 2, 5, 8, generator=gen)
        cos, sin = tables(5, 8)
        rotary = spaces["NPU422/hf_rotary"]["apply_rotary_pos_emb"](q, k, cos[None], sin[None])
        swiglu = spaces["NPU423/swiglu"]["swiglu"](torch.randn(2, 8, generator=gen))
        sides.append([norm(x), *rotary, swiglu])
    for original, ported in zip(*sides, strict=True):
        assert torch.equal(original, ported)
    assert not [c for c in calls if c.startswith("npu_")]
