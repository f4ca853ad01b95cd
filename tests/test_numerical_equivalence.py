"""Every NPU4xx golden case that changes code runs twice on the same random inputs: the original on the GPU-side
references (fake flash_attn / xformers / apex), the port on the NPU-side references (fake torch_npu / mindiesd,
with flash_attn and friends made unimportable). Outputs must agree in shape, dtype and value (float32 tightly,
bf16 within its rounding), and each run must really go through its side's kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

torch = pytest.importorskip("torch", reason="pip install torch==2.13.0 (CPU) to run the numerical-equivalence tests")

from fake_modules import installed  # noqa: E402
from golden_cases import cases  # noqa: E402

from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.port.python import port_source  # noqa: E402

ATTENTION = {"npu_fusion_attention"}
TOLERANCE = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def qkv(q_shape, kv_shape, dtype, seed=0):
    return (
        rand(*q_shape, dtype=dtype, seed=seed),
        rand(*kv_shape, dtype=dtype, seed=seed + 1),
        rand(*kv_shape, dtype=dtype, seed=seed + 2),
    )


def cu(lengths):
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)


@dataclass(frozen=True)
class Spec:
    run: Callable[[dict, torch.dtype], object]  # (module namespace, dtype) -> outputs
    kernels: set[str] = field(default_factory=lambda: set(ATTENTION))  # NPU-side functions the port must call
    ported_imports_gpu: bool = False  # the port still imports flash_attn for calls it left (TODO) alone


def _module(ns, name, *args, weights_seed=None, dtype=torch.float32):
    module = ns[name](*args)
    if weights_seed is not None:
        generator = torch.Generator().manual_seed(weights_seed)
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.randn(p.shape, generator=generator))
    return module.to(dtype).eval()


SPECS: dict[str, Spec] = {
    # causal with seqlen_q != seqlen_k (bottom-right), GQA (4 query heads on 2), default scale, dropout in eval
    "NPU400/causal_gqa": Spec(
        lambda ns, dt: _module(ns, "CausalSelfAttention")(*qkv((2, 5, 4, 16), (2, 9, 2, 16), dt))
    ),
    # explicit scale, positional arguments
    "NPU400/interface_positional": Spec(lambda ns, dt: ns["attention"](*qkv((2, 6, 3, 8), (2, 6, 3, 8), dt))),
    "NPU400/module_import": Spec(
        lambda ns, dt: (
            ns["attend"](*qkv((1, 4, 2, 8), (1, 7, 2, 8), dt)),
            ns["attend"](*qkv((1, 4, 2, 8), (1, 7, 1, 8), dt), causal=False),
        )
    ),
    "NPU400/packed": Spec(
        lambda ns, dt: (
            ns["self_attention"](rand(2, 5, 3, 2, 8, dtype=dt)),
            ns["cross_attention"](rand(2, 4, 2, 8, dtype=dt), rand(2, 6, 2, 1, 8, dtype=dt, seed=1), 0.3),
        )
    ),
    # varlen with 3 sequences, seqlen_q != seqlen_k in each, GQA
    "NPU401/varlen": Spec(
        lambda ns, dt: (
            ns["packed_attention"](*qkv((10, 4, 8), (15, 2, 8), dt), cu([3, 5, 2]), cu([4, 5, 6]), 5, 6),
            ns["packed_full"](*qkv((10, 4, 8), (15, 2, 8), dt), cu([3, 5, 2]), cu([4, 5, 6]), 5, 6),
        )
    ),
    "NPU401/varlen_packed": Spec(
        lambda ns, dt: (
            ns["self_attention"](rand(11, 3, 2, 8, dtype=dt), cu([4, 3, 4]), 4),
            ns["cross_attention"](
                rand(9, 2, 8, dtype=dt), rand(12, 2, 2, 8, dtype=dt, seed=1), cu([2, 3, 4]), cu([5, 3, 4]), 4, 5
            ),
        )
    ),
    # no `import torch` in the module: the helper imports it under its own name
    "NPU401/module_without_torch": Spec(
        lambda ns, dt: ns["self_attention"](rand(11, 3, 2, 8, dtype=dt), cu([4, 3, 4]), 4)
    ),
    "NPU402/window": Spec(
        lambda ns, dt: (
            _module(ns, "SlidingWindowAttention", 2)(*qkv((1, 8, 2, 8), (1, 10, 2, 8), dt)),
            ns["local_attention"](*qkv((1, 8, 2, 8), (1, 10, 2, 8), dt), 2, 1),
            ns["local_attention"](*qkv((1, 8, 2, 8), (1, 8, 2, 8), dt), -1, 0),
            ns["local_varlen"](*qkv((10, 2, 8), (13, 2, 8), dt), cu([3, 5, 2]), cu([4, 5, 4]), 5, 5),
            ns["no_window"](*qkv((1, 6, 2, 8), (1, 6, 2, 8), dt)),
        )
    ),
    "NPU403/unsupported": Spec(
        lambda ns, dt: ns["defaults_are_fine"](*qkv((1, 6, 2, 8), (1, 6, 2, 8), dt)), ported_imports_gpu=True
    ),
    # xformers: top-left causal with seqlen_q < seqlen_k (differs from bottom-right), none, bottom-right, scale
    "NPU405/xformers_masks": Spec(
        lambda ns, dt: (
            _module(ns, "Attention")(*qkv((2, 4, 2, 8), (2, 7, 2, 8), dt), causal=True),
            _module(ns, "Attention")(*qkv((2, 4, 2, 8), (2, 7, 2, 8), dt)),
            ns["decoder_step"](*qkv((2, 4, 2, 8), (2, 7, 2, 8), dt)),
        )
    ),
    # BMK (3-D) inputs, default and explicit scale
    "NPU405/diffusers_bmk": Spec(
        lambda ns, dt: (
            ns["XFormersAttnProcessor"]()(*qkv((6, 5, 8), (6, 7, 8), dt)),
            ns["XFormersAttnProcessor"]()(*qkv((6, 5, 8), (6, 7, 8), dt), scale=0.2),
        )
    ),
    "NPU408/try_guard": Spec(
        lambda ns, dt: (
            ns["attention"](*qkv((2, 6, 2, 8), (2, 6, 2, 8), dt)),
            ns["attention"](*qkv((2, 6, 2, 8), (2, 9, 2, 8), dt), causal=False),
        )
    ),
    "NPU408/partial": Spec(
        lambda ns, dt: ns["attention"](*qkv((2, 3, 2, 8), (2, 5, 2, 8), dt)), ported_imports_gpu=True
    ),
    "NPU408/lazy_import": Spec(lambda ns, dt: ns["attention"](*qkv((2, 3, 2, 8), (2, 5, 2, 8), dt))),
    "NPU420/hf_llama": Spec(
        lambda ns, dt: _module(ns, "LlamaRMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_rms_norm"},
    ),
    "NPU420/meta_llama": Spec(
        lambda ns, dt: _module(ns, "RMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_rms_norm"},
    ),
    "NPU420/t5": Spec(
        lambda ns, dt: _module(ns, "T5LayerNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_rms_norm"},
    ),
    "NPU420/variants": Spec(
        lambda ns, dt: _module(ns, "SqrtRMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_rms_norm"},
    ),
    "NPU420/nested_class": Spec(
        lambda ns, dt: _module(ns, "RMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_rms_norm"},
    ),
    "NPU421/gemma": Spec(
        lambda ns, dt: _module(ns, "GemmaRMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={"npu_gemma_rms_norm"},
    ),
    # HF layout: q/k (B, N, S, D), cos/sin (B, S, D) unsqueezed to (B, 1, S, D); k with fewer heads
    "NPU422/hf_rotary": Spec(
        lambda ns, dt: ns["apply_rotary_pos_emb"](
            rand(2, 4, 5, 8, dtype=dt),
            rand(2, 2, 5, 8, dtype=dt, seed=1),
            rand(2, 5, 8, dtype=dt, seed=2),
            rand(2, 5, 8, dtype=dt, seed=3),
        ),
        kernels={"npu_rotary_mul"},
    ),
    # the same in a method, factors the other way round
    "NPU422/in_a_method": Spec(
        lambda ns, dt: _module(ns, "Attention", 8, dtype=dt).rotate(
            rand(2, 4, 5, 8, dtype=dt), rand(2, 5, 8, dtype=dt, seed=2), rand(2, 5, 8, dtype=dt, seed=3)
        ),
        kernels={"npu_rotary_mul"},
    ),
    # BSND q/k with a (seq, dim) table broadcast to (1, S, 1, D)
    "NPU422/table_broadcast": Spec(
        lambda ns, dt: ns["apply_rotary"](
            rand(2, 5, 4, 8, dtype=dt), rand(2, 5, 2, 8, dtype=dt, seed=1), rand(5, 8, seed=2), rand(5, 8, seed=3)
        ),
        kernels={"npu_rotary_mul"},
    ),
    "NPU423/swiglu": Spec(
        lambda ns, dt: (
            _module(ns, "FusedMLP", 8, 6, weights_seed=1, dtype=dt)(rand(2, 3, 8, dtype=dt)),
            ns["swiglu"](rand(2, 3, 12, dtype=dt)),
        ),
        kernels={"npu_swiglu"},
    ),
    # each norm on its own as well (an RMSNorm after an RMSNorm would hide the first one's epsilon)
    "NPU424/apex_norms": Spec(
        lambda ns, dt: (lambda block, x: (block(x), block.attn_norm(x), block.mlp_norm(x), block.final_norm(x)))(
            _module(ns, "Block", 16, weights_seed=1, dtype=dt), rand(2, 3, 16, dtype=dt)
        ),
        kernels=set(),
    ),
}


def _changing_cases():
    """NPU4xx golden cases whose port changes more than comments (TODO-only ports compute the same code)."""
    out = []
    for case in cases():
        if case.rule.startswith("NPU4") and case.expected.exists():

            def code(text: str) -> list[str]:
                return [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]

            if code(case.input.read_text("utf-8")) != code(case.expected.read_text("utf-8")):
                out.append(case)
    return out


CHANGING = _changing_cases()


def test_every_changing_attention_and_norm_case_has_a_numerical_spec():
    missing = sorted({c.id for c in CHANGING} - SPECS.keys())
    assert not missing, f"golden cases without a numerical-equivalence spec: {missing}"
    assert len(CHANGING) >= 20


def execute(text: str, name: str, side: str, spec: Spec, dtype, calls: list[str]):
    namespace = {"__name__": name.replace("/", "_")}
    with installed(side, calls):
        exec(compile(text, name, "exec"), namespace)
        torch.manual_seed(0)
        with torch.no_grad():
            return spec.run(namespace, dtype)


def flatten(outputs) -> list:
    return [t for o in outputs for t in flatten(o)] if isinstance(outputs, (tuple, list)) else [outputs]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("case", CHANGING, ids=[c.id for c in CHANGING])
def test_port_computes_what_the_original_computes(case, dtype):
    spec = SPECS[case.id]
    original_text = case.input.read_text("utf-8")
    ported_text = case.expected.read_text("utf-8")
    gpu_calls: list[str] = []
    npu_calls: list[str] = []
    expected = execute(original_text, case.id, "gpu", spec, dtype, gpu_calls)
    actual = execute(ported_text, case.id, "both" if spec.ported_imports_gpu else "npu", spec, dtype, npu_calls)
    assert spec.kernels <= set(npu_calls), f"the port did not call {spec.kernels - set(npu_calls)}"
    assert not {"flash_attn_func", "flash_attn_varlen_func", "memory_efficient_attention"} & set(npu_calls), (
        "the port still called a GPU function"
    )
    expected, actual = flatten(expected), flatten(actual)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert a.shape == e.shape and a.dtype == e.dtype == dtype
        torch.testing.assert_close(a, e, **TOLERANCE[dtype])


@pytest.mark.parametrize(
    "mistake",
    [
        ("scale=softmax_scale,", ""),  # the op's default scale 1.0
        ("2 if top_left else 3", "2"),  # causal aligned top-left although seqlen_q != seqlen_k
        ("q.shape[2]", "k.shape[2]"),  # key/value heads as head_num
        ("diagonal=1", "diagonal=0"),  # a mask that hides the diagonal
    ],
)
def test_the_comparison_catches_a_wrong_port(mistake):
    """The equivalence test can fail: each plausible mistake in the helper makes it fail on the same golden case."""
    case = next(c for c in CHANGING if c.id == "NPU400/causal_gqa")
    good = case.expected.read_text("utf-8")
    wrong = good.replace(*mistake)
    assert wrong != good
    expected = execute(case.input.read_text("utf-8"), case.id, "gpu", SPECS[case.id], torch.float32, [])
    try:
        actual = execute(wrong, case.id, "npu", SPECS[case.id], torch.float32, [])
    except AssertionError:
        return  # the reference refused the call, as the op would
    assert not torch.allclose(actual, expected, **TOLERANCE[torch.float32])


def test_dropout_expression_is_kept_and_becomes_keep_prob():
    case = next(c for c in CHANGING if c.id == "NPU400/causal_gqa")
    ported = case.expected.read_text("utf-8")
    assert "_npu_flash_attn(q, k, v, dropout_p=self.dropout if self.training else 0.0, causal=True)" in ported
    seen: dict = {}
    namespace: dict = {"__name__": "dropout_case"}
    with installed("npu"):
        exec(compile(ported, case.id, "exec"), namespace)
        import torch_npu

        real = torch_npu.npu_fusion_attention

        def spy(*args, **kwargs):
            seen.update(kwargs)
            return real(*args, **kwargs)

        torch_npu.npu_fusion_attention = spy
        module = namespace["CausalSelfAttention"](0.25).train()
        out = module(*qkv((2, 5, 4, 16), (2, 9, 2, 16), torch.float32))
        assert seen["keep_prob"] == 0.75 and seen["sparse_mode"] == 3
        module.eval()(*qkv((2, 5, 4, 16), (2, 9, 2, 16), torch.float32))
        assert seen["keep_prob"] == 1.0
    assert out.shape == (2, 5, 4, 16)


def test_mindiesd_backend_uses_attention_forward_when_it_can():
    source = (
        "import torch\n"
        "from flash_attn import flash_attn_func\n\n\n"
        "def plain(q, k, v):\n    return flash_attn_func(q, k, v, softmax_scale=0.3)\n\n\n"
        "def causal(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
    )
    ported = port_source(source, Selection(), {"attention_backend": "mindiesd"}).new_text
    assert ported is not None and "from mindiesd import attention_forward" in ported
    spec = Spec(lambda ns, dt: ns["plain"](*qkv((2, 6, 2, 8), (2, 7, 2, 8), dt)))
    calls: list[str] = []
    torch.testing.assert_close(
        execute(ported, "mindiesd", "npu", spec, torch.float32, calls),
        execute(source, "mindiesd", "gpu", spec, torch.float32, []),
    )
    assert calls == ["attention_forward"]
    spec = Spec(lambda ns, dt: ns["causal"](*qkv((2, 6, 2, 8), (2, 7, 2, 8), dt)))
    calls.clear()
    torch.testing.assert_close(
        execute(ported, "mindiesd", "npu", spec, torch.float32, calls),
        execute(source, "mindiesd", "gpu", spec, torch.float32, []),
    )
    assert calls == ["npu_fusion_attention"]  # causal: MindIE-SD's attention_forward has no causal mode
