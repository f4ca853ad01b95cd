"""Real projects from PyPI, ported by the CLI, train a tiny model under `ascend-port emulate` like the originals.

Each project is pinned in pyproject.toml's `test` extra and installed in site-packages. A test copies the installed
package into a temporary folder (third-party code is never committed here), ports the copy in place with
`ascend-port apply --no-git`, and runs one driver twice: the ported copy first on PYTHONPATH under
`ascend-port emulate` on the `npu` device, and the original on plain CPU (no torch_npu importable). The driver builds
a tiny model from a config under a fixed seed (no download), runs STEPS forward + backward + AdamW steps, and prints
the losses and where the gradients live. The port must have rewritten the modules that the model runs, the emulated
run must have called the torch_npu APIs the port introduced (its --report), and the losses must agree.

- transformers 5.23.0: LlamaForCausalLM (the port fuses its RMSNorm and rotary embedding into npu_rms_norm and
  npu_rotary_mul) and GPT2LMHeadModel, in fp32 and under bf16 autocast.
- x-transformers 2.31.10: a decoder with rotary embeddings, RMSNorm, GLU feed-forward, grouped KV heads and the
  SDPA ("flash") attention path; the port makes its device picker `default_device()` choose the npu.
- PaLM-rlhf-pytorch 0.8.0: PaLM, whose flash-attention setup probes `torch.cuda.get_device_properties(...)` and
  `q.is_cuda` (ported to torch.npu and `is_npu`).
- vector-quantize-pytorch 1.32.0 (the quantizer of VQ-VAE and audio codecs; extras in its pyproject.toml, see
  tests/test_npu_extra_resolves.py): a learnable codebook and residual FSQ, whose quantization runs in fp32 under
  `autocast('cuda', enabled=False)`, ported to the npu's autocast.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, PortedCopies, calls, check, installed, last_json, needs_compiler, run_on_path

STEPS = 3
# (distribution, pinned version, import package): the pins of pyproject.toml's `test` extra.
TRANSFORMERS = ("transformers", "5.23.0", "transformers")
X_TRANSFORMERS = ("x-transformers", "2.31.10", "x_transformers")
PALM = ("PaLM-rlhf-pytorch", "0.8.0", "palm_rlhf_pytorch")
VECTOR_QUANTIZE = ("vector-quantize-pytorch", "1.32.0", "vector_quantize_pytorch")

# The tiny models, shared by the drivers below: build() -> (the project's package, the model, loss_of(module, ids)),
# where module is the model or its DistributedDataParallel wrapper (whose forward must run for its gradient hooks).
BUILD = """
def build():
    if model_name == "llama":
        import transformers
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
        model = LlamaForCausalLM(config)
        return transformers, model, lambda module, ids: module(input_ids=ids, labels=ids).loss
    if model_name == "gpt2":
        import transformers
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64, bos_token_id=0,
                            eos_token_id=0)
        model = GPT2LMHeadModel(config)
        return transformers, model, lambda module, ids: module(input_ids=ids, labels=ids).loss
    if model_name == "x-transformers":
        import x_transformers
        from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper
        from x_transformers.attend import default_device

        extra["default_device"] = default_device().type  # the project's own device choice
        decoder = Decoder(dim=64, depth=2, heads=4, attn_kv_heads=2, rotary_pos_emb=True, attn_flash=True,
                          use_rmsnorm=True, ff_glu=True)
        model = AutoregressiveWrapper(TransformerWrapper(num_tokens=128, max_seq_len=64, attn_layers=decoder))
        return x_transformers, model, lambda module, ids: module(ids)
    if model_name.startswith("palm"):
        import palm_rlhf_pytorch.attention
        from palm_rlhf_pytorch import PaLM

        model = PaLM(num_tokens=128, dim=64, depth=2, dim_head=16, heads=4, flash_attn=model_name == "palm-flash")
        # the SDPA kernels its attention picked for the accelerator at init (None: no accelerator, the CPU's kernels)
        configs = {str(m.cuda_config) for m in model.modules() if isinstance(m, palm_rlhf_pytorch.attention.Attention)}
        extra["accelerator_config"] = sorted(configs)
        return palm_rlhf_pytorch, model, lambda module, ids: module(ids, return_loss=True)
    if model_name == "vq":  # a VQ-VAE bottleneck: a learnable codebook beside residual FSQ, an autoencoder's loss
        import vector_quantize_pytorch
        from vector_quantize_pytorch import ResidualFSQ, VectorQuantize

        class Bottleneck(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inp, self.out = torch.nn.Linear(64, 32), torch.nn.Linear(32, 64)
                self.vq = VectorQuantize(dim=32, codebook_size=64, learnable_codebook=True, ema_update=False)
                self.fsq = ResidualFSQ(dim=32, levels=[8, 5, 5], num_quantizers=2)

            def forward(self, ids):
                x = torch.nn.functional.one_hot(ids, 128).float()[..., :64]
                h = self.inp(x)
                quantized, _, commitment = self.vq(h)
                residual, _ = self.fsq(h)
                return torch.nn.functional.mse_loss(self.out(quantized + residual), x) + commitment.sum()

        model = Bottleneck()
        return vector_quantize_pytorch, model, lambda module, ids: module(ids)
    raise SystemExit(f"unknown model {model_name}")
"""

# One driver for every project: argv is MODEL DEVICE DTYPE. The model is built on CPU under seed 0 and moved to the
# device; the batch is drawn on CPU from its own generator, so both sides see the same weights and tokens.
DRIVER = (
    """
import json, sys

import torch

model_name, device, dtype = sys.argv[1:4]
extra = {}
"""
    + BUILD
    + """

torch.manual_seed(0)
package, model, loss_of = build()
model = model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(1, 128, (2, 17), generator=torch.Generator().manual_seed(1)).to(device)
losses = []
for _ in range(STEPS):
    with torch.autocast(device, dtype=torch.bfloat16, enabled=dtype == "bf16"):
        loss = loss_of(model, ids)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    optimizer.step()
    losses.append(loss.item())
print(json.dumps({
    "package": package.__file__,
    "losses": losses,
    "grads": len(grads),
    "grad_devices": sorted({g.device.type for g in grads}),
    "param_devices": sorted({p.device.type for p in model.parameters()}),
    **extra,
}))
"""
)


run = run_on_path


@pytest.fixture(scope="module", autouse=True)
def compiler():
    needs_compiler()


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """port(project) -> the folder holding the ported copy of the project's package: an NPU-only fork, for
    transformers also runs on other devices (by default its CUDA code is only reported)."""
    return PortedCopies(tmp_path_factory, "--other-devices", "drop")


def emulate_and_reference(tmp_path: Path, ported: Path, package: str, model: str, dtype: str = "fp32"):
    """The driver under the emulator on the ported copy, and on CPU on the original: (npu result, CPU result,
    emulate report, emulate process)."""
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(DRIVER).replace("STEPS", str(STEPS)), "utf-8")
    report = tmp_path / "report.json"
    start = time.perf_counter()
    emulated = run(
        [*CLI, "emulate", "--report", str(report), "--", sys.executable, str(script), model, "npu", dtype],
        cwd=tmp_path,
        pythonpath=ported,
    )
    print(f"emulated {model} ({dtype}) in {time.perf_counter() - start:.1f}s")
    start = time.perf_counter()
    reference = last_json(check(run([sys.executable, str(script), model, "cpu", dtype], cwd=tmp_path)))
    print(f"reference {model} ({dtype}) on CPU in {time.perf_counter() - start:.1f}s")
    assert Path(reference["package"]).is_relative_to(installed(*PROJECTS[package])), reference["package"]
    data = json.loads(report.read_text("utf-8")) if report.exists() else {}
    return emulated, reference, data


PROJECTS = {project[2]: project for project in (TRANSFORMERS, X_TRANSFORMERS, PALM, VECTOR_QUANTIZE)}


def compare(emulated: dict, reference: dict, ported: Path, tolerance: float) -> None:
    # The ported copy ran, on the npu, with a gradient for every parameter that has one on CPU.
    assert Path(emulated["package"]).is_relative_to(ported), emulated["package"]
    assert emulated["param_devices"] == emulated["grad_devices"] == ["npu"], emulated
    assert reference["grad_devices"] == ["cpu"] and emulated["grads"] == reference["grads"] > 0
    print("emulated", emulated["losses"], "reference", reference["losses"])
    assert len(emulated["losses"]) == len(reference["losses"]) == STEPS
    assert all(math.isfinite(loss) for loss in emulated["losses"] + reference["losses"])
    for npu_loss, cpu_loss in zip(emulated["losses"], reference["losses"], strict=True):
        assert abs(npu_loss - cpu_loss) <= tolerance, (emulated["losses"], reference["losses"])
    assert reference["losses"][0] > reference["losses"][-1]  # the optimizer steps really train


# fp32: the emulated device computes on CPU with CPU kernels, and the fused-op references compute in fp32 what the
# original's eager code computes (RMSNorm, rotate-half RoPE). Only the order of fp32 operations may differ, ~1e-6 on
# a loss of ~5: 1e-5 allows that and nothing a wrong port would do (a wrong RMSNorm epsilon or rotation, an untied
# weight, a skipped optimizer step, moves the loss by 1e-3 and more). Measured: at most 4.8e-7 (transformers'
# Llama and GPT-2), 9.5e-7 (PaLM), 0.0 (x-transformers).
FP32_TOLERANCE = 1e-5
# bf16 autocast: CPU's autocast and the npu's (PrivateUse1) cast different op lists to bf16, so the losses round
# differently: measured 1.7e-4 (GPT-2), 12x below the bound, while the loss falls by ~0.55 over the steps.
BF16_TOLERANCE = 2e-3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "dtype"),
    [
        ("llama", "fp32"),
        ("gpt2", "fp32"),
        ("gpt2", "bf16"),
        ("llama", "bf16"),
    ],
)
def test_transformers_trains_under_the_emulator_like_the_original(tmp_path, port, model, dtype):
    ported = port(TRANSFORMERS)
    package = ported / "transformers"
    llama = (package / "models" / "llama" / "modeling_llama.py").read_text("utf-8")
    assert "import torch_npu" in llama
    assert "torch_npu.npu_rms_norm(" in llama
    # Llama's cos/sin are scaled by attention_scaling (above 1 under YaRN/LongRoPE, outside the op's [-1, 1]):
    # NPU422 leaves its rotary with a TODO
    assert "q_embed = (q * cos) + (rotate_half(q) * sin)" in llama and "NPU422" in llama
    # GPT-2's own module has nothing CUDA-specific: what it runs of the port is the core (torch.cuda checks of
    # utils/import_utils.py, modeling_utils.py, masking, the cache), which now imports torch_npu.
    assert "import torch_npu" in (package / "modeling_utils.py").read_text("utf-8")
    assert "torch.npu.is_available()" in (package / "utils" / "import_utils.py").read_text("utf-8")

    result, reference, report = emulate_and_reference(tmp_path, ported, "transformers", model, dtype)
    emulated = last_json(check(result))
    compare(emulated, reference, ported, FP32_TOLERANCE if dtype == "fp32" else BF16_TOLERANCE)
    if model == "llama":  # every decoder layer's two norms and the final one, per forward
        assert calls(report).get("torch_npu.npu_rms_norm", 0) == STEPS * 5, calls(report)
    assert calls(report).get("torch.npu.is_available", 0) > 0, calls(report)
    assert not report.get("not_implemented"), report


@pytest.mark.slow
def test_x_transformers_trains_under_the_emulator_like_the_original(tmp_path, port):
    ported = port(X_TRANSFORMERS)
    attend = (ported / "x_transformers" / "attend.py").read_text("utf-8")
    assert "import torch_npu" in attend
    # default_device() tries xpu, cuda, mps in turn: CUDA stays, the NPU is tried right after it (NPU120)
    assert (
        "if torch.cuda.is_available():\n        return torch.device('cuda')\n    elif hasattr(torch, \"npu\")" in attend
    )
    assert "torch.npu.is_available():\n        return torch.device('npu')" in attend

    result, reference, report = emulate_and_reference(tmp_path, ported, "x_transformers", "x-transformers")
    emulated = last_json(check(result))
    # The ported device picker chooses the npu where the original, on a machine without CUDA, chooses the CPU.
    assert (emulated["default_device"], reference["default_device"]) == ("npu", "cpu")
    compare(emulated, reference, ported, FP32_TOLERANCE)
    assert calls(report).get("torch.npu.is_available", 0) > 0, calls(report)
    assert not report.get("not_implemented"), report


@pytest.mark.slow
@pytest.mark.parametrize(
    "flash",
    [
        False,
        True,
    ],
)
def test_palm_trains_under_the_emulator_like_the_original(tmp_path, port, flash):
    ported = port(PALM)
    attention = (ported / "palm_rlhf_pytorch" / "attention.py").read_text("utf-8")
    assert "import torch_npu" in attention and "q.is_npu" in attention
    assert "if False and False:" in attention and "get_device_properties" not in attention

    model = "palm-flash" if flash else "palm"
    result, reference, report = emulate_and_reference(tmp_path, ported, "palm_rlhf_pytorch", model)
    emulated = last_json(check(result))
    compare(emulated, reference, ported, FP32_TOLERANCE)
    # Attention() checks torch.npu.is_available() first; its A100 test of the device properties (a flash-attention
    # SM gate) is ported to False (NPU112), so no device properties are read on the NPU.
    assert calls(report).get("torch.npu.is_available", 0) > 0, calls(report)
    assert "torch.npu.get_device_properties" not in calls(report), calls(report)
    # (the original under the emulator asks torch.npu.is_available() too, through accelerate: what tells the port
    # apart is the kernel choice it makes for the npu, where the original, seeing no CUDA, keeps none)
    assert emulated["accelerator_config"] == ([FLASH_ON_NPU] if flash else ["None"]), emulated
    assert reference["accelerator_config"] == ["None"], reference
    assert not report.get("not_implemented"), report


# PaLM's Attention(flash_attn=True) on an accelerator that is not an A100: the math and memory-efficient SDPA kernels
FLASH_ON_NPU = "EfficientAttentionConfig(enable_flash=False, enable_math=True, enable_mem_efficient=True)"


@pytest.mark.slow
def test_vector_quantize_trains_under_the_emulator_like_the_original(tmp_path, port):
    ported = port(VECTOR_QUANTIZE)
    package = ported / "vector_quantize_pytorch"
    # the quantizers keep their fp32 islands on the npu: autocast('cuda', enabled=False) -> 'npu' (NPU300)
    assert "@autocast('npu', enabled = False)" in (package / "vector_quantize_pytorch.py").read_text("utf-8")
    assert "with autocast('npu', enabled = False):" in (package / "residual_fsq.py").read_text("utf-8")

    result, reference, report = emulate_and_reference(tmp_path, ported, "vector_quantize_pytorch", "vq")
    emulated = last_json(check(result))
    compare(emulated, reference, ported, FP32_TOLERANCE)
    assert not report.get("not_implemented") and not report.get("stayed_on_cpu"), report
