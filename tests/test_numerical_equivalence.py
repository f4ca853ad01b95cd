"""Every NPU4xx golden case that changes code runs twice on the same random inputs: the original on the GPU-side
references (fake flash_attn / xformers / apex), the port on the NPU-side references (fake torch_npu / mindiesd,
with flash_attn and friends made unimportable), in the dtypes the original takes: flash-attn cases in fp16 and bf16
(its references reject fp32, as flash-attn's kernels do), the others in fp32 and bf16. Outputs must agree in shape,
dtype and value (float32 tightly, fp16 and bf16 within their rounding: TOLERANCE), gradients too (w.r.t. the
floating inputs and the module parameters: GRAD_TOLERANCE), and each run must really go through its side's kernel.

Under ``ascend-port emulate`` (tests/test_emulate_golden.py runs this file there) each case also runs with the port's
inputs and modules on the emulated ``npu`` device and the emulator's own stand-in ``torch_npu`` (whose fused ops are
ascend_port/emulate/ops.py), forward and backward, against the original on CPU with the GPU-side fakes: flash-attn
cases in bf16 only (flash-attn has no fp32 kernels), the others (xformers, apex, plain torch) in fp32 and bf16."""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import re
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="pip install torch==2.13.0 (CPU) to run the numerical-equivalence tests")

import gpu_reference  # noqa: E402
from fake_modules import installed, on_npu_tensors  # noqa: E402
from golden_cases import cases  # noqa: E402

from ascend_port.core.options import PortOptions  # noqa: E402
from ascend_port.core.selection import Selection  # noqa: E402
from ascend_port.emulate.runner import DEVICES_ENV  # noqa: E402
from ascend_port.port.python import port_source  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:npu_gemma_rms_norm has no backward:UserWarning")  # no_backward

ATTENTION = {"npu_fusion_attention"}
GPU_FUNCTIONS = {
    "flash_attn_func",
    "flash_attn_varlen_func",
    "memory_efficient_attention",
    "pad_input",
    "index_first_axis",
    "index_put_first_axis",
}
# Forward, per dtype: fp32 tightly (both sides compute in fp32); bf16 2e-2 and fp16 2**-9 (about 2e-3), a few
# roundings of each (8 and 11 significant bits: one rounding is up to 2**-8 and 2**-11 relative).
TOLERANCE = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
    torch.float16: dict(rtol=2**-9, atol=2**-9),
}
# Gradients: fp32 as the forward (both sides compute in fp32; only the order of the reductions differs). bf16 keeps 8
# significant bits (one rounding: up to 2**-8 relative), and the two sides round at different places: the original
# rounds after every bf16 op of its torch code (LlamaRMSNorm's `weight * x.to(bf16)`, rotary's `q * cos + rotate(q) *
# sin`) and reduces a broadcast parameter's gradient (weight, cos) in bf16, where the fused references compute in
# fp32 and round once. So 2**-6 (four roundings) relative to each element, plus 2**-6 of the tensor's largest
# gradient for elements that are sums of terms of either sign (cancellation). Measured: the worst bf16 element uses
# 35% of this (an error of 0.0077 * the largest gradient, about two roundings), fp32 0.3%; attention gradients agree
# bit for bit (both references compute them in fp32 from the same formula). fp16 (the flash-attn cases' second
# dtype): the same four roundings of 11 significant bits, 2**-9.
GRAD_TOLERANCE = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.bfloat16: dict(rtol=2**-6, atol=2**-6),
    torch.float16: dict(rtol=2**-9, atol=2**-9),
}


def _emulator_torch_npu():
    """The emulator's stand-in torch_npu when this process runs under `ascend-port emulate` (the runner sets
    $ASCEND_PORT_EMULATE_DEVICES and puts the stand-in first on PYTHONPATH), else None. Under the emulator a stand-in
    that does not import, or a torch without the emulated device, is an error here, not a skip."""
    if not os.environ.get(DEVICES_ENV):
        return None
    import torch_npu

    emulate_dir = Path(__file__).resolve().parent.parent / "ascend_port" / "emulate"
    assert Path(torch_npu.__file__).resolve().is_relative_to(emulate_dir / "stub"), torch_npu.__file__
    assert getattr(torch, "_ascend_port_emulate_native", None) is not None, "torch has no emulated npu device"
    assert torch.device("npu").type == "npu" and torch.npu.is_available()
    return torch_npu


STAND_IN = _emulator_torch_npu()
EMULATED = STAND_IN is not None


@dataclass
class _Inputs:
    """Where rand/cu/_module put what they make, and the gradient leaves they record (None: no gradients)."""

    device: str = "cpu"
    leaves: list[tuple[str, torch.Tensor]] | None = None


_INPUTS = _Inputs()


@contextlib.contextmanager
def _making(device: str, leaves: list | None) -> Iterator[None]:
    saved = (_INPUTS.device, _INPUTS.leaves)
    _INPUTS.device, _INPUTS.leaves = device, leaves
    try:
        yield
    finally:
        _INPUTS.device, _INPUTS.leaves = saved


def _leaf(tensor: torch.Tensor, name: str) -> torch.Tensor:
    if _INPUTS.leaves is not None and tensor.is_floating_point():
        tensor.requires_grad_(True)
        _INPUTS.leaves.append((name, tensor))
    return tensor


def rand(*shape, dtype=torch.float32, seed=0):
    """Generated on CPU (the same values on every device), then moved to the run's device."""
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype).to(_INPUTS.device)
    return _leaf(t, f"input{len(_INPUTS.leaves or ())}{list(shape)}")


def qkv(q_shape, kv_shape, dtype, seed=0):
    return (
        rand(*q_shape, dtype=dtype, seed=seed),
        rand(*kv_shape, dtype=dtype, seed=seed + 1),
        rand(*kv_shape, dtype=dtype, seed=seed + 2),
    )


def padding_mask(lengths, seqlen):
    """(batch, seqlen) bool: True for the first ``lengths[b]`` positions of each row (flash-attn's attention_mask)."""
    return (torch.arange(seqlen)[None, :] < torch.tensor(lengths)[:, None]).to(_INPUTS.device)


def _deterministic(ns, dt):
    """NPU400/deterministic: `deterministic=` (a flag and an attribute) dropped, the forward unchanged."""
    attention = _module(ns, "Attention")
    attention.cfg = types.SimpleNamespace(deterministic=True)
    return (
        attention(*qkv((2, 5, 4, 8), (2, 7, 2, 8), dt), deterministic=True),
        attention.packed(*qkv((10, 2, 8), (10, 2, 8), dt), cu([3, 5, 2]), 5),
    )


def _five_values(ns, dt):
    """NPU410/module_and_classes: flash-attn >= 2.7's unpad_input (five values) on the original's side."""
    saved, gpu_reference.FLASH_ATTN_VERSION = gpu_reference.FLASH_ATTN_VERSION, "2.7.0"
    try:
        out, first, cu_seqlens, max_len, used = ns["gather"](rand(2, 5, 3, dtype=dt), padding_mask([5, 2], 5))
    finally:
        gpu_reference.FLASH_ATTN_VERSION = saved
    return out, first, cu_seqlens.to(dt), torch.tensor(float(max_len), dtype=dt, device=out.device), used.to(dt)


def cu(lengths):
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32).to(_INPUTS.device)


@dataclass(frozen=True)
class Spec:
    run: Callable[[dict, torch.dtype], object]  # (module namespace, dtype) -> outputs
    kernels: set[str] = field(default_factory=lambda: set(ATTENTION))  # NPU-side functions the port must call
    ported_imports_gpu: bool = False  # the port still imports flash_attn for calls it left (TODO) alone
    no_backward: str = ""  # why the port's outputs carry no gradient (a known gap: the test xfails after the forward)
    padding_only: bool = False  # the original calls only flash_attn.bert_padding's fakes (no attention kernel)
    float32_outputs: tuple[int, ...] = ()  # outputs in float32 whatever the input dtype (on both sides)
    plain_original: bool = False  # the original is plain torch code (hand-written attention): no GPU-side kernel
    # modules the case imports that must be imported before the fakes are installed (transformers probes the
    # packages it may use, flash_attn among them, by their import spec, which a fake has none of)
    imports_first: tuple[str, ...] = ()


def _module(ns, name, *args, weights_seed=None, dtype=torch.float32):
    module = ns[name](*args)
    if weights_seed is not None:
        generator = torch.Generator().manual_seed(weights_seed)
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.randn(p.shape, generator=generator))
    module = module.to(dtype).to(_INPUTS.device).eval()
    if _INPUTS.leaves is not None:
        n = len(_INPUTS.leaves)
        for p_name, p in module.named_parameters():
            _INPUTS.leaves.append((f"{name}@{n}.{p_name}", p))
    return module


def positions() -> torch.Tensor:
    """(batch, seq) position ids into a 7-position cache, on the run's device."""
    return torch.tensor([[0, 1, 2, 3, 4], [2, 3, 4, 5, 6]]).to(_INPUTS.device)


def _tables(positions: int, dim: int, dtype) -> tuple:
    """Real rotary tables (cos, sin), (positions, dim), in [-1, 1] as npu_rotary_mul documents them."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(positions).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    n = len(_INPUTS.leaves or ())
    return tuple(
        _leaf(t.to(dtype).to(_INPUTS.device), f"{name}{n}") for name, t in (("cos", emb.cos()), ("sin", emb.sin()))
    )


def _mlp_config(hidden_act: str) -> types.SimpleNamespace:
    """A transformers MLP's config: 8 features, 6 hidden, ``hidden_act`` (a key of ACT2FN)."""
    return types.SimpleNamespace(hidden_size=8, intermediate_size=6, hidden_act=hidden_act)


def _norm(cls: str, kernel: str = "npu_rms_norm", **options) -> Spec:
    """A norm class of the module (16 features, random weights) on a (2, 3, 16) input, through ``kernel``."""
    return Spec(
        lambda ns, dt: _module(ns, cls, 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
        kernels={kernel},
        **options,
    )


def hf_mask(allowed: torch.Tensor, dtype) -> torch.Tensor:
    """HF's eager mask from a bool one (True = attend): 0 where attended, the dtype's lowest value elsewhere."""
    return torch.where(allowed, 0.0, torch.finfo(dtype).min).to(dtype).to(_INPUTS.device)


def causal_padding(lengths, sq: int, sk: int) -> torch.Tensor:
    """(B, 1, Sq, Sk) bool, True = attend: causal (bottom-right) and the keys of each row's first ``lengths[b]``
    positions; right padding, so that no query row is masked entirely."""
    causal = torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=sk - sq)
    keys = torch.arange(sk)[None, :] < torch.tensor(lengths)[:, None]
    return causal[None, None] & keys[:, None, None, :]


def _hf_eager(ns, dt, training=False, **kwargs):
    """NPU425/hf_eager: transformers' eager_attention_forward, GQA 4 query heads on 2, HF's additive mask (longer
    than the keys: HF slices it); the attention output (the weights are None on the op's side)."""
    module = types.SimpleNamespace(num_key_value_groups=2, training=training)
    q, k, v = qkv((2, 4, 5, 8), (2, 2, 7, 8), dt)
    mask = hf_mask(causal_padding([7, 6], 5, 9), dt)
    return ns["eager_attention_forward"](module, q, k, v, mask, 8**-0.5, dropout=0.1, **kwargs)[0]


def softmax_mask(*shape, seed=0) -> torch.Tensor:
    """A bool mask (True = masked out) with a fully masked first row: the op and the fills of -10000 and of the
    dtype's minimum all make it uniform."""
    mask = torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) < 0.4
    mask[..., 0, :] = True
    return mask.to(_INPUTS.device)


def _masked_softmax_specs() -> dict[str, Spec]:
    """NPU428: scores (2, 2, 32, 64), the op's smallest shapes, a mask broadcast over the heads. In-place masking
    (masked_fill_) takes scores that are not a leaf."""
    kernels = {"npu_scaled_masked_softmax"}

    def scores(dt):
        return rand(2, 2, 32, 64, dtype=dt) * 1.0

    def masked_scores(ns, dt):
        mask, value = softmax_mask(2, 1, 32, 64), rand(2, 2, 64, 8, dtype=dt, seed=1)
        return (
            ns["deberta_attention"](scores(dt), ~mask, value),
            ns["xlm_attention"](scores(dt), mask, value),
            ns["method_form"](scores(dt), mask, value),
        )

    def op_fill(ns, dt):
        mask, value = softmax_mask(2, 1, 32, 64, seed=1), rand(2, 2, 64, 8, dtype=dt, seed=1)
        attention = _module(ns, "Attention", dtype=dt)
        attention.mask = mask
        keep = (~mask).to(dt)  # (1.0 where kept)
        return (
            ns["glm_probs"](scores(dt), mask, value),
            attention(scores(dt), value),
            ns["padding_flags"](scores(dt), keep, value),
        )

    return {
        "NPU428/masked_scores": Spec(masked_scores, kernels=kernels, plain_original=True),
        "NPU428/op_fill": Spec(op_fill, kernels=kernels, plain_original=True),
    }


def _eager_attention_specs() -> dict[str, Spec]:
    return {
        "NPU425/hf_eager": Spec(_hf_eager, plain_original=True),
        # causal by a tril buffer and masked_fill(-inf): (B, N, S, D), 3 heads
        "NPU425/nanogpt_causal": Spec(
            lambda ns, dt: _module(ns, "CausalSelfAttention", 8, dtype=dt)(*qkv((2, 3, 5, 8), (2, 3, 5, 8), dt)),
            plain_original=True,
        ),
        # a causal mask made between the steps, of a size read there (`seq = query.shape[-2]`); the random mask is kept
        "NPU425/causal_made_in_run": Spec(
            lambda ns, dt: ns["attention"](*qkv((2, 3, 5, 8), (2, 3, 5, 8), dt), 8**-0.5), plain_original=True
        ),
        # transformers 4.3x's layer: shape checks between the steps, GQA by repeat_kv, HF's (B, 1, Sq, Sk) mask
        "NPU425/layer_with_checks": Spec(
            lambda ns, dt: _module(ns, "Attention", 4, 2, 8, dtype=dt)(
                *qkv((2, 4, 5, 8), (2, 2, 5, 8), dt), hf_mask(causal_padding([5, 4], 5, 5), dt)
            )[0],
            plain_original=True,
        ),
        # q pre-scaled, GQA by repeat_interleave, a (B, S) padding mask of the keys
        "NPU425/prescaled_padding": Spec(
            lambda ns, dt: ns["attend"](*qkv((2, 4, 5, 8), (2, 2, 6, 8), dt), padding_mask([6, 3], 6), 8),
            plain_original=True,
        ),
    }


def diffusers_attn(heads: int, dt) -> types.SimpleNamespace:
    """diffusers' Attention as AttnProcessor2_0 uses it: fixed projections (the gradients go to the hidden states),
    `prepare_attention_mask` repeating a (B, 1, Sk) additive mask over the heads as diffusers does."""
    return types.SimpleNamespace(
        heads=heads,
        to_q=lambda x: x,
        to_k=lambda x: x * 0.5 + 0.1,
        to_v=lambda x: x.flip(-1),
        to_out=[lambda x: x],
        prepare_attention_mask=lambda mask, target, batch: mask.to(dt).repeat_interleave(heads, dim=0),
    )


def xformers_attn(heads: int, scale: float | None, dt) -> types.SimpleNamespace:
    """diffusers' Attention as its xformers processor uses it: the additive (B, 1, Sk) mask repeated per head."""
    return types.SimpleNamespace(
        heads=heads,
        scale=scale,
        prepare_attention_mask=lambda mask, target, batch: (
            None if mask is None else mask.to(dt).repeat_interleave(heads, dim=0)
        ),
    )


def diffusers_mask(lengths, sk: int, dt, fill: float = -10000.0) -> torch.Tensor:
    """(B, 1, Sk) additive: 0 for each row's first ``lengths[b]`` keys, ``fill`` for the rest (diffusers' -10000)."""
    keys = torch.arange(sk)[None, :] < torch.tensor(lengths)[:, None]
    return torch.where(keys, 0.0, fill)[:, None, :].to(dt).to(_INPUTS.device)


def _sdpa_specs() -> dict[str, Spec]:
    return {
        # 2 heads of 8, cross-attention on 6 keys padded to [6, 4]
        "NPU430/diffusers_processor": Spec(
            lambda ns, dt: ns["AttnProcessor2_0"]()(
                diffusers_attn(2, dt),
                rand(2, 5, 16, dtype=dt),
                rand(2, 6, 16, dtype=dt, seed=1),
                diffusers_mask([6, 4], 6, dt),
            ),
            plain_original=True,
        ),
        # GQA 4 query heads on 2 (enable_gqa), HF's mask longer than the keys (sliced), is_causal from the mask
        "NPU430/hf_sdpa_forward": Spec(
            lambda ns, dt: ns["sdpa_attention_forward"](
                types.SimpleNamespace(is_causal=True),
                *qkv((2, 4, 5, 8), (2, 2, 7, 8), dt),
                hf_mask(causal_padding([7, 6], 5, 9), dt),
                scaling=8**-0.5,
            )[0],
            plain_original=True,
        ),
    }


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
    # diffusers 0.18's processor with a mask: 2 heads, keys padded to [7, 4] (-10000, and -inf), and no mask
    "NPU405/diffusers_masked": Spec(
        lambda ns, dt: (
            ns["XFormersAttnProcessor"]()(
                xformers_attn(2, 0.3, dt), *qkv((4, 5, 8), (4, 7, 8), dt), diffusers_mask([7, 4], 7, dt)
            ),
            ns["XFormersAttnProcessor"]()(
                xformers_attn(2, None, dt), *qkv((4, 5, 8), (4, 7, 8), dt), diffusers_mask([3, 7], 7, dt, -math.inf)
            ),
            ns["XFormersAttnProcessor"]()(xformers_attn(2, 0.3, dt), *qkv((4, 5, 8), (4, 7, 8), dt)),
        )
    ),
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
    "NPU400/deterministic": Spec(_deterministic),
    # the kv-cache call keeps flash-attn (and its guard): the ported call beside it
    "NPU408/gate_not_ported": Spec(
        lambda ns, dt: ns["attention"](*qkv((2, 3, 2, 8), (2, 5, 2, 8), dt)), ported_imports_gpu=True
    ),
    "NPU408/version_check": Spec(
        lambda ns, dt: ns["attention"](*qkv((10, 2, 8), (10, 2, 8), dt), cu([3, 5, 2]), 5, deterministic=True)
    ),
    # unpad_input (4 values), varlen causal, pad_input; the version assert on both sides
    "NPU408/version_import": Spec(
        lambda ns, dt: (
            ns["forward"](*qkv((3, 5, 2, 8), (3, 5, 2, 8), dt), padding_mask([5, 2, 4], 5)),
            ns["forward"](*qkv((3, 5, 2, 8), (3, 5, 2, 8), dt, seed=3), padding_mask([1, 5, 3], 5), past=()),
        )
    ),
    # the fake flash-attn is older than 2.6: both sides take the branch the port rewrote
    "NPU408/version_kept": Spec(
        lambda ns, dt: ns["attention"](*qkv((2, 4, 2, 8), (2, 6, 2, 8), dt)), ported_imports_gpu=True
    ),
    "NPU410/internvl_style": Spec(
        lambda ns, dt: (
            _module(ns, "FlashAttention")(rand(2, 5, 3, 2, 8, dtype=dt), padding_mask([5, 3], 5)),
            _module(ns, "FlashAttention")(rand(2, 5, 3, 2, 8, dtype=dt, seed=1), padding_mask([2, 4], 5), True),
        )
    ),
    "NPU410/module_and_classes": Spec(_five_values, kernels=set(), padding_only=True),
    # unpad_input's whole result stays on flash-attn; pad_input is ported
    "NPU410/unknown_arity": Spec(
        lambda ns, dt: ns["whole"](rand(2, 5, 3, dtype=dt), padding_mask([4, 5], 5)),
        kernels=set(),
        ported_imports_gpu=True,
        padding_only=True,
    ),
    "NPU420/hf_llama": _norm("LlamaRMSNorm"),
    "NPU420/meta_llama": _norm("RMSNorm"),
    "NPU420/t5": _norm("T5LayerNorm"),
    "NPU420/variants": _norm("SqrtRMSNorm"),
    "NPU420/nested_class": _norm("RMSNorm"),
    # npu_rms_norm on (1 + weight): npu_gemma_rms_norm has no backward (its reference gives no gradient)
    "NPU421/gemma": _norm("GemmaRMSNorm"),
    # float32 on purpose, and a cast back to the input's dtype
    "NPU420/dtype_contract": Spec(
        lambda ns, dt: (
            _module(ns, "Float32RMSNorm", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
            _module(ns, "CastBackRMSNorm", 16, weights_seed=2, dtype=dt)(rand(2, 3, 16, dtype=dt, seed=1)),
        ),
        kernels={"npu_rms_norm"},
        float32_outputs=(0,),
    ),
    # diffusers' optional weight: with one (in the input's dtype, and a float32 one on a lower-precision input,
    # which returns float32), and without (the original computation)
    "NPU420/optional_weight": Spec(
        lambda ns, dt: (
            _module(ns, "RMSNorm", 16, 1e-6, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)),
            _module(ns, "RMSNorm", 16, 1e-6, weights_seed=2)(rand(2, 3, 16, dtype=dt, seed=1)),
            _module(ns, "RMSNorm", 16, 1e-6, False, dtype=dt)(rand(2, 3, 16, dtype=dt, seed=2)),
        ),
        kernels={"npu_rms_norm"},
        float32_outputs=(1,),
    ),
    # HF layout: q/k (B, N, S, D), cos/sin (B, S, D) (real tables, in [-1, 1]) unsqueezed to (B, 1, S, D); k with
    # fewer heads
    "NPU422/hf_rotary": Spec(
        lambda ns, dt: ns["apply_rotary_pos_emb"](
            rand(2, 4, 5, 8, dtype=dt),
            rand(2, 2, 5, 8, dtype=dt, seed=1),
            *(t[positions()] for t in _tables(7, 8, dt)),
        ),
        kernels={"npu_rotary_mul"},
    ),
    # in a method, factors the other way round: (seq, dim) caches gathered by (batch, seq) position ids
    "NPU422/in_a_method": Spec(
        lambda ns, dt: _module(ns, "Attention", 8, dtype=dt).rotate(
            rand(2, 4, 5, 8, dtype=dt), *_tables(7, 8, dt), positions()
        ),
        kernels={"npu_rotary_mul"},
    ),
    # transformers 4.33 Llama: (1, 1, seq, dim) caches squeezed, gathered by position ids, unsqueezed
    "NPU422/reassigned_table": Spec(
        lambda ns, dt: ns["apply_rotary_pos_emb"](
            rand(2, 4, 5, 8, dtype=dt),
            rand(2, 2, 5, 8, dtype=dt, seed=1),
            *(t[None, None] for t in _tables(7, 8, dt)),
            positions(),
        ),
        kernels={"npu_rotary_mul"},
    ),
    # BSND q/k with a (seq, dim) table broadcast to (1, S, 1, D)
    "NPU422/table_broadcast": Spec(
        lambda ns, dt: ns["apply_rotary"](
            rand(2, 5, 4, 8, dtype=dt), rand(2, 5, 2, 8, dtype=dt, seed=1), *_tables(5, 8, torch.float32)
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
    # transformers' MLP through ACT2FN["silu"] (its SiLUActivation), and a module given torch's nn.SiLU (either order)
    "NPU423/act_fn": Spec(
        lambda ns, dt: (
            _module(ns, "LlamaMLP", _mlp_config("silu"), weights_seed=1, dtype=dt)(rand(2, 3, 8, dtype=dt)),
            _module(ns, "ParamMLP", 8, 6, weights_seed=2, dtype=dt)(rand(2, 3, 8, dtype=dt, seed=1)),
        ),
        kernels={"npu_swiglu"},
        imports_first=("transformers.activations",),
    ),
    # gate in the second half (diffusers), in the first with the tanh GELU, split over the channels (dim=1)
    "NPU426/geglu": Spec(
        lambda ns, dt: (
            _module(ns, "GEGLU", 8, 6, weights_seed=1, dtype=dt)(rand(2, 3, 8, dtype=dt)),
            ns["geglu_first"](rand(2, 3, 12, dtype=dt)),
            ns["geglu_channels"](rand(2, 6, 3, 4, dtype=dt)),
        ),
        kernels={"npu_geglu"},
    ),
    "NPU426/gelu_method": Spec(
        lambda ns, dt: _module(ns, "GEGLU", 8, 6, weights_seed=1, dtype=dt)(rand(2, 3, 8, dtype=dt)),
        kernels={"npu_geglu"},
    ),
    # each norm on its own as well (an RMSNorm after an RMSNorm would hide the first one's epsilon)
    "NPU424/apex_norms": Spec(
        lambda ns, dt: (lambda block, x: (block(x), block.attn_norm(x), block.mlp_norm(x), block.final_norm(x)))(
            _module(ns, "Block", 16, weights_seed=1, dtype=dt), rand(2, 3, 16, dtype=dt)
        ),
        kernels=set(),
    ),
    # a factory of both norms (apex's default eps and 1e-6) and a module of several (memory_efficient dropped)
    "NPU424/defined_once": Spec(
        lambda ns, dt: (
            lambda x: (
                _module(ns, "make_norm", 16, weights_seed=1, dtype=dt)(x),
                _module(ns, "make_norm", 16, True, weights_seed=2, dtype=dt)(x),
                _module(ns, "Encoder", 16, 2, weights_seed=3, dtype=dt)(x),
            )
        )(rand(2, 3, 16, dtype=dt)),
        kernels=set(),
    ),
    # the subclass imports torch in its forward
    "NPU424/no_torch_import": Spec(
        lambda ns, dt: _module(ns, "Head", 16, weights_seed=1, dtype=dt)(rand(2, 3, 16, dtype=dt)), kernels=set()
    ),
    **_eager_attention_specs(),
    **_masked_softmax_specs(),
    **_sdpa_specs(),
}


# The lines of NPU411's guard around an import the port left: with the package installed it computes the same.
_GUARD_LINE = re.compile(r"^(?:try:|except ImportError:  # no NPU build: .*|\w+ = None)$")


def _changing_cases():
    """NPU4xx golden cases whose port changes more than comments (TODO-only ports compute the same code, and so do
    NPU411's import guards)."""
    out = []
    for case in cases():
        if case.rule.startswith("NPU4") and case.expected.exists():

            def code(text: str) -> list[str]:
                lines = [ln.strip() for ln in text.splitlines()]
                return [ln for ln in lines if ln and not ln.startswith("#") and not _GUARD_LINE.match(ln)]

            if code(case.input.read_text("utf-8")) != code(case.expected.read_text("utf-8")):
                out.append(case)
    return out


CHANGING = _changing_cases()


def test_every_changing_attention_and_norm_case_has_a_numerical_spec():
    missing = sorted({c.id for c in CHANGING} - SPECS.keys())
    assert not missing, f"golden cases without a numerical-equivalence spec: {missing}"
    assert len(CHANGING) >= 20


@contextlib.contextmanager
def _side(side: str, calls: list[str]) -> Iterator[None]:
    """The modules one run imports. ``gpu``, ``npu``, ``both``: the test fakes (fake_modules.installed). ``emulated``
    (``emulated+gpu``: with the GPU fakes too, for a port that keeps TODO calls): the emulator's own stand-in
    torch_npu, the GPU packages blocked; the fused ops it ran are read from its call report (torch_npu._report)."""
    if not side.startswith("emulated"):
        with installed(side, calls):
            yield
        return
    assert STAND_IN is not None, "not running under ascend-port emulate"
    report = STAND_IN._report.calls
    before = Counter(report)
    try:
        with installed("both" if side == "emulated+gpu" else "npu", calls):
            sys.modules["torch_npu"] = STAND_IN  # the real module the emulated process imports, not the fake
            yield
    finally:
        calls += [name.removeprefix("torch_npu.") for name in (Counter(report) - before).elements()]


@dataclass
class Traced:
    outputs: list  # the spec's outputs, flattened
    leaves: list[tuple[str, torch.Tensor]]  # with grad: the floating inputs and module parameters, in creation order


def trace(text: str, name: str, side: str, spec: Spec, dtype, calls: list[str], device="cpu", grad=False) -> Traced:
    for module in spec.imports_first:
        importlib.import_module(module)
    namespace = {"__name__": name.replace("/", "_")}
    leaves: list[tuple[str, torch.Tensor]] | None = [] if grad else None
    text = text if side == "gpu" else on_npu_tensors(text)
    with _side(side, calls):
        exec(compile(text, name, "exec"), namespace)
        torch.manual_seed(0)
        with _making(device, leaves), torch.set_grad_enabled(grad):
            return Traced(flatten(spec.run(namespace, dtype)), leaves or [])


def execute(text: str, name: str, side: str, spec: Spec, dtype, calls: list[str]):
    for module in spec.imports_first:
        importlib.import_module(module)
    namespace = {"__name__": name.replace("/", "_")}
    text = text if side == "gpu" else on_npu_tensors(text)
    with installed(side, calls):
        exec(compile(text, name, "exec"), namespace)
        torch.manual_seed(0)
        with torch.no_grad():
            return spec.run(namespace, dtype)


def flatten(outputs) -> list:
    return [t for o in outputs for t in flatten(o)] if isinstance(outputs, (tuple, list)) else [outputs]


def gradients(traced: Traced) -> list[tuple[str, torch.Tensor | None]]:
    """d(sum of <output_i, g_i>)/d(leaf) for fixed random cotangents g_i (the same on both sides: seeded by the
    output's position); None for a leaf the outputs do not depend on."""
    pairs = [
        (o, torch.randn(o.shape, generator=torch.Generator().manual_seed(1000 + i)).to(o.dtype).to(o.device))
        for i, o in enumerate(traced.outputs)
        if o.requires_grad
    ]
    if not pairs or not traced.leaves:
        return [(name, None) for name, _ in traced.leaves]
    grads = torch.autograd.grad(
        [o for o, _ in pairs], [t for _, t in traced.leaves], [g for _, g in pairs], allow_unused=True
    )
    return [(name, g) for (name, _), g in zip(traced.leaves, grads)]


def compare(case, spec: Spec, dtype, expected: Traced, actual: Traced, npu_calls: list[str], device: str) -> bool:
    """Forward, kernels and (unless ``spec.no_backward``) gradients; False: the known backward gap was seen."""
    assert spec.kernels <= set(npu_calls), f"the port did not call {spec.kernels - set(npu_calls)}"
    assert not GPU_FUNCTIONS & set(npu_calls), "the port still called a GPU function"
    assert len(expected.outputs) == len(actual.outputs)
    for i, (e, a) in enumerate(zip(expected.outputs, actual.outputs)):
        assert a.shape == e.shape and a.dtype == e.dtype == (torch.float32 if i in spec.float32_outputs else dtype)
        assert e.device.type == "cpu" and a.device.type == device, (e.device, a.device)
        torch.testing.assert_close(a.detach().cpu(), e.detach(), **TOLERANCE[dtype])
    if spec.no_backward:
        assert all(e.requires_grad for e in expected.outputs)
        assert not any(a.requires_grad for a in actual.outputs), f"{case.id} has a backward now: drop no_backward"
        return False
    assert [a.requires_grad for a in actual.outputs] == [e.requires_grad for e in expected.outputs]
    assert [n for n, _ in actual.leaves] == [n for n, _ in expected.leaves]
    assert expected.leaves, "no gradient leaves"
    for (name, e), (_, a) in zip(gradients(expected), gradients(actual)):
        assert (a is None) == (e is None), f"gradient w.r.t. {name}: {a is not None} on the port, {e is not None}"
        if e is None:
            continue
        assert a.shape == e.shape and a.dtype == e.dtype and a.device.type == device, (name, a, e)
        tolerance = dict(GRAD_TOLERANCE[dtype])
        tolerance["atol"] *= max(1.0, float(e.detach().abs().max()))
        torch.testing.assert_close(
            a.detach().cpu(), e.detach(), **tolerance, msg=lambda m, name=name: f"gradient w.r.t. {name}: {m}"
        )
    return True


def dtypes(case) -> tuple:
    """The dtypes a case runs in on CPU: flash-attn's kernels take fp16 and bf16 only (its references reject fp32, as
    flash-attn does); xformers, apex and plain torch take fp32 too."""
    if "flash_attn" in case.input.read_text("utf-8"):
        return (torch.float16, torch.bfloat16)
    return (torch.float32, torch.bfloat16)


DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
CASE_DTYPES = [(case, dtype) for case in CHANGING for dtype in dtypes(case)]


@pytest.mark.parametrize("case, dtype", CASE_DTYPES, ids=[f"{c.id}-{DTYPE_NAMES[d]}" for c, d in CASE_DTYPES])
def test_port_computes_what_the_original_computes(case, dtype):
    """On CPU with the test fakes, in each dtype the original runs in (see dtypes)."""
    spec = SPECS[case.id]
    npu_calls: list[str] = []
    expected = trace(case.input.read_text("utf-8"), case.id, "gpu", spec, dtype, [], grad=True)
    side = "both" if spec.ported_imports_gpu else "npu"
    actual = trace(case.expected.read_text("utf-8"), case.id, side, spec, dtype, npu_calls, grad=True)
    if not compare(case, spec, dtype, expected, actual, npu_calls, "cpu"):
        pytest.xfail(spec.no_backward)


def original_dtypes(case) -> tuple:
    """flash-attn has no fp32 (its kernels take fp16 and bf16); xformers, apex and plain torch take fp32 too."""
    if "flash_attn" in case.input.read_text("utf-8"):
        return (torch.bfloat16,)
    return (torch.float32, torch.bfloat16)


@pytest.mark.skipif(not EMULATED, reason="runs under `ascend-port emulate` (tests/test_emulate_golden.py runs it)")
@pytest.mark.parametrize("case", CHANGING, ids=[c.id for c in CHANGING])
def test_port_on_the_emulated_npu_matches_the_original(case):
    """The port on the emulated npu (inputs, modules, gradients there) with the emulator's stand-in torch_npu, forward
    and backward, against the original on CPU with the GPU-side fakes."""
    spec = SPECS[case.id]
    gaps = []
    for dtype in original_dtypes(case):
        gpu_calls: list[str] = []
        npu_calls: list[str] = []
        expected = trace(case.input.read_text("utf-8"), case.id, "gpu", spec, dtype, gpu_calls, grad=True)
        side = "emulated+gpu" if spec.ported_imports_gpu else "emulated"
        actual = trace(case.expected.read_text("utf-8"), case.id, side, spec, dtype, npu_calls, "npu", grad=True)
        # the original ran its GPU-side fake
        assert bool(gpu_calls) == bool(spec.kernels & ATTENTION and not spec.plain_original or spec.padding_only)
        if not compare(case, spec, dtype, expected, actual, npu_calls, "npu"):
            gaps.append(dtype)
    if spec.kernels:  # the stand-in ran the shared references, not a copy
        ops = sys.modules["_ascend_port_emulate_ops"]
        assert Path(ops.__file__).resolve() == Path(__file__).resolve().parent.parent / "ascend_port/emulate/ops.py"
    if gaps:
        pytest.xfail(spec.no_backward)


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
    expected = execute(case.input.read_text("utf-8"), case.id, "gpu", SPECS[case.id], torch.float16, [])
    try:
        actual = execute(wrong, case.id, "npu", SPECS[case.id], torch.float16, [])
    except AssertionError:
        return  # the reference refused the call, as the op would
    assert not torch.allclose(actual, expected, **TOLERANCE[torch.float16])


@pytest.mark.parametrize("precise", [True, False], ids=["fp32_or_fp16", "bf16"])
@pytest.mark.parametrize(
    "case_id, mistake",
    [
        # the weight cut off the graph: no gradient reaches it
        ("NPU420/hf_llama", ("hidden_states, self.weight.float(),", "hidden_states, self.weight.detach().float(),")),
        # the same forward (k + 0), the key's gradient 5% too large: more than bf16's rounding
        ("NPU400/causal_gqa", ("(q, k, v, dropout_p=self", "(q, k + 0.05 * (k - k.detach()), v, dropout_p=self")),
        # the same forward, the gradient of the query's first half lost (a straight-through slice)
        ("NPU422/hf_rotary", ("npu_rotary_mul(q,", "npu_rotary_mul(torch.cat([q[..., :4].detach(), q[..., 4:]], -1),")),
    ],
    ids=["detached_weight", "scaled_gradient", "lost_gradient"],
)
def test_the_gradient_comparison_catches_a_wrong_backward(case_id, mistake, precise):
    """A port whose forward matches but whose backward does not fails on the gradients (in the case's more precise
    dtype, fp32 or for flash-attn fp16, and in bf16)."""
    case = next(c for c in CHANGING if c.id == case_id)
    dtype = dtypes(case)[0 if precise else 1]
    good = case.expected.read_text("utf-8")
    wrong = good.replace(*mistake)
    assert wrong != good
    spec = SPECS[case.id]
    expected = trace(case.input.read_text("utf-8"), case.id, "gpu", spec, dtype, [], grad=True)
    actual = trace(wrong, case.id, "npu", spec, dtype, [*spec.kernels], grad=True)
    for e, a in zip(expected.outputs, actual.outputs):  # the forward is right
        torch.testing.assert_close(a, e, **TOLERANCE[dtype])
    with pytest.raises(AssertionError, match="gradient w.r.t."):
        compare(case, spec, dtype, expected, actual, [*spec.kernels], "cpu")


GLU_CASES = ["NPU423/swiglu", "NPU426/geglu", "NPU426/gelu_method"]


@pytest.mark.parametrize("case_id", GLU_CASES)
@pytest.mark.parametrize("precision", ["fp16", "autocast_bf16"])
def test_glu_ports_in_fp16_and_under_autocast(case_id, precision):
    """The fused GLU ports also in fp16, and with fp32 modules under autocast (bf16 linear layers feeding the op),
    forward and backward, within the rounding of the lower precision."""
    case = next(c for c in CHANGING if c.id == case_id)
    spec, low = SPECS[case_id], torch.float16 if precision == "fp16" else torch.bfloat16
    dtype = torch.float16 if precision == "fp16" else torch.float32
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if precision != "fp16" else contextlib.nullcontext()
    npu_calls: list[str] = []
    with autocast:
        expected = trace(case.input.read_text("utf-8"), case_id, "gpu", spec, dtype, [], grad=True)
        actual = trace(case.expected.read_text("utf-8"), case_id, "npu", spec, dtype, npu_calls, grad=True)
        pairs = list(zip(gradients(expected), gradients(actual)))
    assert spec.kernels <= set(npu_calls)
    for e, a in zip(expected.outputs, actual.outputs):
        assert a.shape == e.shape and a.dtype == e.dtype
        torch.testing.assert_close(a.detach(), e.detach(), **TOLERANCE[low])
    assert pairs
    for (name, e), (_, a) in pairs:
        tolerance = dict(GRAD_TOLERANCE[low])
        tolerance["atol"] *= max(1.0, float(e.detach().abs().max()))
        torch.testing.assert_close(a, e, **tolerance, msg=lambda m, name=name: f"gradient w.r.t. {name}: {m}")


def test_swiglu_through_act_fn_keeps_other_activations():
    """NPU423/act_fn: with ACT2FN["gelu"] the port runs the original expression (no npu_swiglu), and agrees."""
    case = next(c for c in CHANGING if c.id == "NPU423/act_fn")
    spec = Spec(
        lambda ns, dt: _module(ns, "LlamaMLP", _mlp_config("gelu"), weights_seed=1, dtype=dt)(rand(2, 3, 8, dtype=dt)),
        kernels=set(),
        imports_first=("transformers.activations",),
    )
    calls: list[str] = []
    expected = execute(case.input.read_text("utf-8"), case.id, "gpu", spec, torch.float32, [])
    actual = execute(case.expected.read_text("utf-8"), case.id, "npu", spec, torch.float32, calls)
    assert "npu_swiglu" not in calls
    torch.testing.assert_close(actual, expected, **TOLERANCE[torch.float32])


@pytest.mark.parametrize(
    "mistake",
    [
        ("approximate=0, activate_left=False", "approximate=0, activate_left=True"),  # the other half activated
        ("approximate=1", "approximate=0"),  # the exact GELU where the original asked for tanh's
        ("dim=1,", "dim=-1,"),  # split over the last axis instead of the channels
    ],
)
def test_the_comparison_catches_a_wrong_geglu(mistake):
    case = next(c for c in CHANGING if c.id == "NPU426/geglu")
    good = case.expected.read_text("utf-8")
    wrong = good.replace(*mistake)
    assert wrong != good
    spec = SPECS[case.id]
    expected = execute(case.input.read_text("utf-8"), case.id, "gpu", spec, torch.float32, [])
    try:
        actual = execute(wrong, case.id, "npu", spec, torch.float32, [])
    except AssertionError:
        return  # the reference refused the call, as the op would
    assert any(
        a.shape != e.shape or not torch.allclose(a, e, **TOLERANCE[torch.float32]) for a, e in zip(actual, expected)
    )


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
    ported = port_source(source, Selection(), PortOptions(attention_backend="mindiesd")).new_text
    assert ported is not None and "from mindiesd import attention_forward" in ported
    spec = Spec(lambda ns, dt: ns["plain"](*qkv((2, 6, 2, 8), (2, 7, 2, 8), dt)))
    calls: list[str] = []
    torch.testing.assert_close(
        execute(ported, "mindiesd", "npu", spec, torch.float16, calls),
        execute(source, "mindiesd", "gpu", spec, torch.float16, []),
        **TOLERANCE[torch.float16],
    )
    assert calls == ["attention_forward"]
    spec = Spec(lambda ns, dt: ns["causal"](*qkv((2, 6, 2, 8), (2, 7, 2, 8), dt)))
    calls.clear()
    torch.testing.assert_close(
        execute(ported, "mindiesd", "npu", spec, torch.float16, calls),
        execute(source, "mindiesd", "gpu", spec, torch.float16, []),
        **TOLERANCE[torch.float16],
    )
    assert calls == ["npu_fusion_attention"]  # causal: MindIE-SD's attention_forward has no causal mode
