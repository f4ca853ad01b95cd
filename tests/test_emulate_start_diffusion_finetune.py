"""Issue 29 (diffusion, fine-tuning): two real projects from PyPI, ported by the CLI, started under `ascend-port
emulate` the way their users start them.

Both support the NPU in parts already (diffusers picks its device through `torch.accelerator` and has an
`AttnProcessorNPU`; peft's `infer_device()` asks accelerate's `is_npu_available()`), so a plain `ascend-port apply`
only reports their CUDA code: like tests/test_emulate_real_projects.py, each copy is ported as an NPU-only fork
(`--other-devices drop`), which rewrites that CUDA code in place. Each project is pinned in pyproject.toml's `test`
extra, copied from site-packages at test time (never committed) and ported once per module.

- diffusers 0.42.1 (diffusion): the start path of its training examples, a tiny UNet2DModel with DDPMScheduler,
  EMAModel, compute_snr and free_memory(); the device from `diffusers.utils.torch_utils.get_device()` and from its
  test harness (`diffusers.utils.testing_utils.torch_device`), the dtype from `maybe_adjust_dtype_for_device`; and
  the process group of `diffusers run --context-parallel` (`_enable_context_parallel`: `init_process_group` on
  "cpu:gloo,cuda:nccl", then Ulysses attention over the ranks) with one and two processes.
  Its sdist ships no tests (tests/ holds testing_utils.py alone), so none of its own unit tests run.
- peft 0.21.2 (fine-tuning): `infer_device()`, `prepare_model_for_kbit_training` (it clears the device's cache),
  `get_peft_model` with LoRA on a tiny transformers Llama, fp32 and a bf16 base with fp32 adapters; DoRA with
  ephemeral GPU offload (`LoraRuntimeConfig(ephemeral_gpu_offload=True)`); the LoRA model in DDP on hccl with one
  and two processes (peft has no process group of its own: a user's script starts it); and its own unit tests of
  the modules the port changed (from its sdist: prepare_model_for_kbit_training, the LoRA variants, MonteCLoRA),
  ported with the package and run under the emulator, the tests that need the Hub left out.

Each path starts: the three that did not when these tests were written are fixed (a device string returned by
`diffusers run`'s `_resolve_device_map`, NPU104; DoRA's `if is_xpu_available(): ... else: .to("cuda")`, NPU120's
branch before the CUDA fallback; the emulator's group_norm of a channels-last tensor).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import (
    CLI,
    PortedCopies,
    calls,
    check,
    ddp_driver,
    installed,
    last_json,
    needs_compiler,
    own_tests,
    process_group_runs,
    run_on_path,
    torchrun,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

STEPS = 3
# (distribution, pinned version, import package): the pins of pyproject.toml's `test` extra.
DIFFUSERS = ("diffusers", "0.42.1", "diffusers")
PEFT = ("peft", "0.21.2", "peft")

# diffusers' training start path (examples/unconditional_image_generation/train_unconditional.py, in small): the
# device is the project's own choice, on both sides. argv: BLOCKS ("plain": ResNet blocks only; "attn": the
# examples' AttnDownBlock2D/AttnUpBlock2D and the mid-block attention). fp32, then bf16 autocast, in one process.
DIFFUSERS_TRAIN = """
import json, sys

import torch
import torch.nn.functional as F

import diffusers
from diffusers import DDPMScheduler, UNet2DModel
from diffusers.training_utils import EMAModel, compute_snr, free_memory, set_seed
from diffusers.utils import torch_utils
from diffusers.utils.testing_utils import torch_device  # the device its own test suite runs on

attention = sys.argv[1] == "attn"
device = torch_utils.get_device()  # torch.accelerator: npu under the emulator, cpu on plain CPU


def train(dtype):
    set_seed(0)
    model = UNet2DModel(
        sample_size=8, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("DownBlock2D", "AttnDownBlock2D" if attention else "DownBlock2D"),
        up_block_types=("AttnUpBlock2D" if attention else "UpBlock2D", "UpBlock2D"),
        add_attention=attention, norm_num_groups=4, attention_head_dim=4,
    ).to(device)
    ema = EMAModel(model.parameters(), foreach=False)
    scheduler = DDPMScheduler(num_train_timesteps=100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(1)
    clean = torch.randn(4, 3, 8, 8, generator=generator).to(device)
    timesteps = torch.randint(0, 100, (4,), generator=generator).to(device)
    # a CPU generator, a device tensor: drawn on the CPU and moved (its check of the generator's device is ported)
    noise = torch_utils.randn_tensor(clean.shape, generator=torch.Generator().manual_seed(2), device=clean.device)
    losses = []
    for _ in range(STEPS):
        noisy = scheduler.add_noise(clean, noise, timesteps)
        with torch.autocast(device, dtype=torch.bfloat16, enabled=dtype == "bf16"):
            pred = model(noisy, timesteps).sample
        snr = compute_snr(scheduler, timesteps)
        loss = (F.mse_loss(pred.float(), noise, reduction="none").mean(dim=(1, 2, 3)) * snr.clamp(max=5.0) / snr)
        loss = loss.mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        optimizer.step()
        ema.step(model.parameters())
        losses.append(loss.item())
    return {
        "losses": losses,
        "pred_dtype": str(pred.dtype),
        "noise_device": noise.device.type,
        "grads": len(grads),
        "grad_devices": sorted({g.device.type for g in grads}),
        "param_devices": sorted({p.device.type for p in model.parameters()}),
        "ema_devices": sorted({p.device.type for p in ema.shadow_params}),
    }


result = {"fp32": train("fp32"), "bf16": train("bf16")}
free_memory()  # gc, then the accelerator's empty_cache
print(json.dumps({
    "package": diffusers.__file__,
    "device": device,
    "torch_device": torch_device,
    "fp64": str(torch_utils.maybe_adjust_dtype_for_device(torch.float64, torch.device(device))),
    **result,
}))
"""

# `diffusers run`'s device and process group: _resolve_device_map(None) pins cuda:$LOCAL_RANK under torchrun, and
# --context-parallel's _enable_context_parallel() starts the process group ("cpu:gloo,cuda:nccl") and applies Ulysses
# attention to the pipeline's transformer (a tiny Flux here). Inference, as `diffusers run` is: Ulysses-anything
# attention has no backward. With one process, no process group: the whole sequence on one device.
DIFFUSERS_PARALLEL = """
import json, os, types

import torch
import torch.distributed as dist

import diffusers
from diffusers import FluxTransformer2DModel
from diffusers.commands import run as cli
from diffusers.utils import torch_utils

world = int(os.environ.get("WORLD_SIZE", "1"))
device_map = cli._resolve_device_map(None)
device = torch.device(torch_utils.get_device(), int(os.environ.get("LOCAL_RANK", "0")))
torch.manual_seed(0)
model = FluxTransformer2DModel(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
                               num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32,
                               axes_dims_rope=(4, 4, 8)).to(device)
generator = torch.Generator().manual_seed(1)
inputs = {
    "hidden_states": torch.randn(1, 16, 4, generator=generator),
    "encoder_hidden_states": torch.randn(1, 8, 32, generator=generator),
    "pooled_projections": torch.randn(1, 32, generator=generator),
    "timestep": torch.tensor([0.5]),
    "img_ids": torch.randn(16, 3, generator=generator),
    "txt_ids": torch.zeros(8, 3),
}
inputs = {name: value.to(device) for name, value in inputs.items()}
backend = None
if world > 1:
    cli._enable_context_parallel(types.SimpleNamespace(transformer=model))
    backend = str(dist.get_backend())
seen = []  # the image tokens each rank's first block sees: all 16, or its share under context parallelism
model.transformer_blocks[0].register_forward_pre_hook(
    lambda module, args, kwargs: seen.append((kwargs.get("hidden_states", args[0] if args else None)).shape[1]),
    with_kwargs=True,
)
with torch.no_grad():
    out = model(**inputs, return_dict=False)[0]
result = json.dumps({
    "package": diffusers.__file__,
    "rank": int(os.environ.get("RANK", "0")),
    "device_map": device_map,
    "backend": backend,
    "tokens_per_rank": seen,
    "out_device": str(out.device),
    "out": out.flatten().tolist(),
})
if world > 1:  # (the ranks' lines of stdout may interleave)
    with open(f"rank{os.environ['RANK']}.json", "w") as file:
        file.write(result)
print(result)
if world > 1:
    dist.destroy_process_group()
"""

# peft's start path for LoRA fine-tuning of a causal LM: its own device choice, then fp32 (through
# prepare_model_for_kbit_training) and a bf16 base (adapters kept in fp32: autocast_adapter_dtype), in one process.
PEFT_TRAIN = """
import json

import torch

import peft
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from peft.utils.other import infer_device
from transformers import LlamaConfig, LlamaForCausalLM

device = infer_device()


def fine_tune(dtype):
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    base = LlamaForCausalLM(config)
    if dtype == "bf16":
        base = base.to(torch.bfloat16)
    base = base.to(device)
    if dtype == "fp32":  # freezes the base, enables gradient checkpointing, clears the device's cache
        base = prepare_model_for_kbit_training(base, use_gradient_checkpointing=True)
    lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0, task_type="CAUSAL_LM")
    model = get_peft_model(base, lora)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-2)
    ids = torch.randint(1, 128, (2, 17), generator=torch.Generator().manual_seed(1)).to(device)
    losses = []
    for _ in range(STEPS):
        loss = model(input_ids=ids, labels=ids).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = [p.grad for p in trainable if p.grad is not None]
        optimizer.step()
        losses.append(loss.item())
    return {
        "losses": losses,
        "trainable": len(trainable),
        "grads": len(grads),
        "grad_devices": sorted({g.device.type for g in grads}),
        "param_devices": sorted({p.device.type for p in model.parameters()}),
        "adapter_dtypes": sorted({str(p.dtype) for p in trainable}),
        "base_dtypes": sorted({str(p.dtype) for p in model.parameters() if not p.requires_grad}),
    }


print(json.dumps({"package": peft.__file__, "device": device, "fp32": fine_tune("fp32"), "bf16": fine_tune("bf16")}))
"""

# DoRA on a model kept in CPU memory, with ephemeral GPU offload: DoRA's weight norm is computed on the accelerator
# (peft/tuners/lora/variants.py, DoraLinearVariant.init), and the magnitude vector is placed back on the CPU.
PEFT_DORA_OFFLOAD = """
import json

import torch

from peft import LoraConfig, get_peft_model
from peft.tuners.lora import LoraRuntimeConfig
from peft.utils.other import infer_device
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
base = LlamaForCausalLM(config)  # offloaded: in CPU memory
lora = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], use_dora=True,
                  runtime_config=LoraRuntimeConfig(ephemeral_gpu_offload=True))
model = get_peft_model(base, lora)
layer = model.base_model.model.model.layers[0].self_attn.q_proj
print(json.dumps({"device": infer_device(), "magnitude": layer.lora_magnitude_vector["default"].weight.device.type}))
"""


# argv: OUTPUT: each rank writes OUTPUT-RANK.json. Rank and world from torchrun's environment, else one process. A
# LoRA model (random A and B: both get gradients) on peft's infer_device(), in DDP on the process group a ported
# script starts (hccl on the npu; gloo for the original on CPU); each rank one forward/backward on its own batch,
# then an optimizer step. Before the DDP wrapper, the same rank computes without it the mean of every rank's
# gradients (what DDP's all-reduce must give); after the step, the loss is all-reduced.
PEFT_DDP = """
import json, sys

import torch
import torch.distributed as dist

import peft
from ddp_step import ddp_step, ranks
from peft import LoraConfig, get_peft_model
from peft.utils.other import infer_device
from transformers import LlamaConfig, LlamaForCausalLM

output = sys.argv[1]
rank, world, local_rank = ranks(29541)
device_type = infer_device()
if device_type == "npu":
    torch.npu.set_device(local_rank)
device = torch.device(device_type, local_rank) if device_type != "cpu" else torch.device("cpu")
dist.init_process_group("hccl" if device_type == "npu" else "gloo")

torch.manual_seed(0)
config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                  init_lora_weights=False)
model = get_peft_model(LlamaForCausalLM(config), lora).to(device)
trainable = [p for p in model.parameters() if p.requires_grad]


def loss_of(module, r):
    ids = torch.randint(1, 128, (2, 17), generator=torch.Generator().manual_seed(100 + r)).to(device)
    return module(input_ids=ids, labels=ids).loss


optimizer = torch.optim.SGD(trainable, lr=0.5)
device_ids = [local_rank] if device_type == "npu" else None
result = ddp_step(model, trainable, loss_of, optimizer, rank, world, device_ids)
result.update(package=peft.__file__, device=device_type, trainable=len(trainable))
with open(f"{output}-{rank}.json", "w") as stream:
    json.dump(result, stream)
"""

run = run_on_path


@pytest.fixture(scope="module", autouse=True)
def compiler():
    needs_compiler()


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """port(project) -> the folder holding the ported copy of the project's package: an NPU-only fork, for both
    projects run on other devices too (by default their CUDA code is only reported)."""
    return PortedCopies(tmp_path_factory, "--other-devices", "drop")


def script(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).replace("STEPS", str(STEPS)), "utf-8")
    return path


def emulate(
    tmp_path: Path, ported: Path, argv: list[str], devices: int = 1
) -> tuple[subprocess.CompletedProcess, dict]:
    """``argv`` under the emulator with the ported copy on PYTHONPATH: (the process, its --report)."""
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    start = time.perf_counter()
    process = run(
        [*CLI, "emulate", "--devices", str(devices), "--report", str(report), "--", *argv],
        cwd=tmp_path,
        pythonpath=ported,
    )
    print(f"emulated {Path(argv[-1]).name} on {devices} device(s) in {time.perf_counter() - start:.1f}s")
    return process, json.loads(report.read_text("utf-8")) if report.exists() else {}


def original(tmp_path: Path, project: tuple[str, str, str], argv: list[str]) -> dict:
    """The installed original on plain CPU (no torch_npu importable)."""
    start = time.perf_counter()
    result = last_json(check(run(argv, cwd=tmp_path)))
    print(f"original {project[0]} on CPU in {time.perf_counter() - start:.1f}s")
    assert Path(result["package"]).is_relative_to(installed(*project)), result["package"]
    return result


def compare_training(npu: dict, cpu: dict, tolerance: float) -> None:
    """The emulated run trained on the npu, with a gradient wherever the original has one, to the original's losses."""
    assert npu["param_devices"] == npu["grad_devices"] == ["npu"], npu
    assert cpu["grad_devices"] == ["cpu"] and npu["grads"] == cpu["grads"] > 0
    print("emulated", npu["losses"], "original", cpu["losses"])
    assert len(npu["losses"]) == len(cpu["losses"]) == STEPS
    assert all(math.isfinite(loss) for loss in npu["losses"] + cpu["losses"])
    for npu_loss, cpu_loss in zip(npu["losses"], cpu["losses"], strict=True):
        assert abs(npu_loss - cpu_loss) <= tolerance, (npu["losses"], cpu["losses"])
    assert cpu["losses"][0] > cpu["losses"][-1]  # the optimizer steps really train


# fp32: the emulated device computes with the CPU kernels; only the order of fp32 operations may differ. Measured:
# 1.5e-8 (diffusers), 0.0 (peft). A wrong port (a skipped step, a lost gradient, a wrong noise) moves them by 1e-3.
FP32_TOLERANCE = 1e-5
# bf16 autocast: CPU's and the npu's (PrivateUse1) autocast cast different op lists. Measured: 2.9e-5 on diffusers'
# losses of ~0.1, which fall by 0.018 over the steps; 3.8e-4 on peft's (bf16 base weights) of ~4.8, falling by 0.09.
DIFFUSERS_BF16_TOLERANCE = 5e-4
PEFT_BF16_TOLERANCE = 2e-3


def _diffusers_training(tmp_path: Path, port, blocks: str) -> None:
    ported = port(DIFFUSERS)
    driver = script(tmp_path, "train_unet.py", DIFFUSERS_TRAIN)
    process, report = emulate(tmp_path, ported, [sys.executable, str(driver), blocks])
    emulated = last_json(check(process))
    reference = original(tmp_path, DIFFUSERS, [sys.executable, str(driver), blocks])
    assert Path(emulated["package"]).is_relative_to(ported), emulated["package"]
    # The project's own choices: torch.accelerator finds the npu; its test harness's device is the npu (a branch
    # the port added); float64 is not an npu dtype, so its dtype helper gives float32 there.
    assert (emulated["device"], reference["device"]) == ("npu", "cpu")
    assert (emulated["torch_device"], reference["torch_device"]) == ("npu", "cpu")
    assert (emulated["fp64"], reference["fp64"]) == ("torch.float32", "torch.float64")
    for dtype, tolerance in (("fp32", FP32_TOLERANCE), ("bf16", DIFFUSERS_BF16_TOLERANCE)):
        npu, cpu = emulated[dtype], reference[dtype]
        compare_training(npu, cpu, tolerance)
        assert npu["ema_devices"] == ["npu"] and npu["noise_device"] == "npu", npu
        assert npu["pred_dtype"] == cpu["pred_dtype"] == ("torch.bfloat16" if dtype == "bf16" else "torch.float32")
    # free_memory() -> empty_device_cache() -> TorchDeviceBackend("npu").empty_cache(): torch.npu's
    assert calls(report).get("torch.npu.empty_cache", 0) == 1, calls(report)
    assert not report.get("not_implemented"), report


@pytest.mark.slow
def test_diffusers_trains_under_the_emulator_like_the_original(tmp_path, port):
    package = port(DIFFUSERS) / "diffusers"
    torch_utils = (package / "utils" / "torch_utils.py").read_text("utf-8")
    # get_device() asks torch.accelerator (multi-device already): kept; randn_tensor's check of the generator's device
    # (a CUDA generator cannot make tensors elsewhere) is the npu's.
    assert "if torch.accelerator.is_available():" in torch_utils
    assert 'elif gen_device_type != device.type and gen_device_type == "npu":' in torch_utils
    testing_utils = (package / "utils" / "testing_utils.py").read_text("utf-8")
    assert 'elif hasattr(torch, "npu") and torch.npu.is_available():\n            torch_device = "npu"' in testing_utils
    # The UNet's attention keeps the SDPA processor (AttnProcessorNPU is opt-in); modeling_utils imports torch_npu.
    assert "import torch_npu" in (package / "models" / "modeling_utils.py").read_text("utf-8")
    _diffusers_training(tmp_path, port, "plain")


@pytest.mark.slow
def test_diffusers_attention_unet_trains_under_the_emulator(tmp_path, port):
    _diffusers_training(tmp_path, port, "attn")


_PARALLEL: dict[str, object] = {}


@pytest.fixture(scope="module")
def diffusers_parallel(port, tmp_path_factory):
    """`diffusers run`'s device and context-parallel set-up of the ported copy: two processes under torchrun (the
    emulator's --devices 2), one process, and the original's one process on CPU. Run once for the tests below."""
    if not _PARALLEL:
        ported = port(DIFFUSERS)
        tmp_path = tmp_path_factory.mktemp("diffusers-parallel")
        driver = script(tmp_path, "parallel.py", DIFFUSERS_PARALLEL)
        two, report = emulate(
            tmp_path, ported, [torchrun(), "--standalone", "--nproc-per-node", "2", str(driver)], devices=2
        )
        check(two)
        ranks = [json.loads((tmp_path / f"rank{rank}.json").read_text("utf-8")) for rank in (0, 1)]
        one, _ = emulate(tmp_path, ported, [sys.executable, str(driver)])
        _PARALLEL.update(
            ported=ported,
            ranks=ranks,
            report=report,
            one=last_json(check(one)),
            cpu=original(tmp_path, DIFFUSERS, [sys.executable, str(driver)]),
        )
    return _PARALLEL


@pytest.mark.slow
def test_diffusers_context_parallel_process_group_on_one_and_two_processes(port, diffusers_parallel):
    run_py = (port(DIFFUSERS) / "diffusers" / "commands" / "run.py").read_text("utf-8")
    assert 'torch.distributed.init_process_group(backend="cpu:gloo,npu:hccl")' in run_py
    assert "torch.npu.set_device(int(local_rank))" in run_py
    ranks, one, cpu = diffusers_parallel["ranks"], diffusers_parallel["one"], diffusers_parallel["cpu"]
    assert [r["rank"] for r in ranks] == [0, 1]
    for rank in ranks:
        assert Path(rank["package"]).is_relative_to(diffusers_parallel["ported"]), rank["package"]
        # The project's own backend string, ported: gloo for CPU tensors, hccl for the npu's.
        assert rank["backend"] == "cpu:gloo,npu:hccl", rank
        assert rank["out_device"] == f"npu:{rank['rank']}", rank
        # Ulysses split the 16 image tokens over the two ranks; each rank gathered the whole output.
        assert rank["tokens_per_rank"] == [8], rank
    assert one["backend"] is None and one["tokens_per_rank"] == [16] and one["out_device"] == "npu:0", one
    assert cpu["tokens_per_rank"] == [16] and cpu["out_device"] == "cpu", cpu
    # Every rank's output, and the one process's, is the original's on CPU (fp32: the same kernels, other orders).
    for result in [*ranks, one]:
        assert len(result["out"]) == len(cpu["out"]) == 16 * 4
        assert max(abs(a - b) for a, b in zip(result["out"], cpu["out"], strict=True)) <= 1e-5
    calls_ = calls(diffusers_parallel["report"])
    assert calls_.get("torch.npu.set_device", 0) == 2, calls_  # _resolve_device_map, once per rank
    assert not diffusers_parallel["report"].get("not_implemented"), diffusers_parallel["report"]


@pytest.mark.slow
def test_diffusers_run_device_map_under_torchrun(diffusers_parallel):
    assert diffusers_parallel["one"]["device_map"] == "npu"  # no LOCAL_RANK: the device get_device() chose
    assert diffusers_parallel["cpu"]["device_map"] == "cpu"
    device_maps = [rank["device_map"] for rank in diffusers_parallel["ranks"]]
    assert device_maps == ["npu:0", "npu:1"]


@pytest.mark.slow
def test_peft_fine_tunes_under_the_emulator_like_the_original(tmp_path, port):
    ported = port(PEFT)
    other = (ported / "peft" / "utils" / "other.py").read_text("utf-8")
    # infer_device() already has its npu branch (accelerate's is_npu_available): kept; prepare_model_for_kbit_training
    # gains an npu branch beside its CUDA empty_cache (NPU120), under a guarded import of torch_npu.
    assert 'elif is_npu_available():\n        return "npu"' in other and 'return "cuda"' in other
    assert 'elif hasattr(torch, "npu") and torch.npu.is_available():\n                torch.npu.empty_cache()' in other
    assert "try:\n    import torch_npu" in other

    driver = script(tmp_path, "fine_tune.py", PEFT_TRAIN)
    process, report = emulate(tmp_path, ported, [sys.executable, str(driver)])
    emulated = last_json(check(process))
    reference = original(tmp_path, PEFT, [sys.executable, str(driver)])
    assert Path(emulated["package"]).is_relative_to(ported), emulated["package"]
    assert (emulated["device"], reference["device"]) == ("npu", "cpu")  # infer_device(), the project's choice
    for dtype, tolerance in (("fp32", FP32_TOLERANCE), ("bf16", PEFT_BF16_TOLERANCE)):
        npu, cpu = emulated[dtype], reference[dtype]
        compare_training(npu, cpu, tolerance)
        # Only the LoRA A/B matrices of q_proj and v_proj train (2 layers x 2 modules x 2), in fp32 over a frozen
        # base of the compute dtype.
        assert npu["trainable"] == cpu["trainable"] == 8
        assert npu["adapter_dtypes"] == cpu["adapter_dtypes"] == ["torch.float32"]
        base = ["torch.bfloat16"] if dtype == "bf16" else ["torch.float32"]
        assert npu["base_dtypes"] == cpu["base_dtypes"] == base
    # prepare_model_for_kbit_training's cache clearing, on the npu branch the port added
    assert calls(report).get("torch.npu.empty_cache", 0) == 1, calls(report)
    assert not report.get("not_implemented"), report


@pytest.mark.slow
def test_peft_dora_ephemeral_offload_under_the_emulator(tmp_path, port):
    ported = port(PEFT)
    driver = script(tmp_path, "dora_offload.py", PEFT_DORA_OFFLOAD)
    process, report = emulate(tmp_path, ported, [sys.executable, str(driver)])
    result = last_json(check(process))
    # DoRA's norm computed on the npu, its magnitude placed back with the offloaded base
    assert result == {"device": "npu", "magnitude": "cpu"}, result
    assert not report.get("stayed_on_cpu"), report


# The project's own tests of the modules the port changed, from its sdist (which ships tests/; the wheel does not),
# the tiny ones that run on CPU without the Hub: prepare_model_for_kbit_training's cache clearing (utils/other.py);
# the LoRA variants (tuners/lora/variants.py: DoRA, aLoRA, ...); MonteCLoRA (tuners/lora/monteclora.py, whose
# Cholesky runs outside autocast) through the common tests of custom models, which run on peft's infer_device(): the
# npu under the emulator. The port's other changes are TODOs (bitsandbytes, Transformer Engine, LoftQ) or code that
# only runs under DeepSpeed ZeRO-3 (trainable_tokens/layer.py), which these tests cannot reach.
PEFT_UNIT_TESTS = [
    "tests/test_other.py::TestPrepareModelForKbitTraining",
    "tests/test_lora_variants.py",
    "tests/test_custom_models.py::TestPeftCustomModel",
    "-k",
    "not test_custom_models or Monteclora",  # of the ~18,000 custom-model cases, MonteCLoRA's
    # (these two load a model from the Hub)
    "--deselect",
    "tests/test_lora_variants.py::TestActivatedLora::test_gradient_checkpointing_double_forward_raises",
    "--deselect",
    "tests/test_lora_variants.py::TestActivatedLora::test_gradient_checkpointing_dpo_doesnt_raise",
    "-o",
    "addopts=",  # (pyproject.toml's addopts ask for pytest-cov)
]
# The sdist lacks the repository's tests/__init__.py (its tests import each other relatively), and its
# testing_utils.py imports `datasets` (not installed here) for helpers that download data sets, which these tests
# do not call.
PEFT_TEST_FILES = {
    "tests/__init__.py": "",
    "datasets.py": "def load_dataset(*args, **kwargs):\n    raise RuntimeError('datasets is not installed')\n",
}


@pytest.fixture(scope="module")
def peft_unit_tests(port, tmp_path_factory):
    """-> (emulated outcomes, original outcomes, emulate report) of PEFT_UNIT_TESTS."""
    sdist = corpora.fetch(*PEFT[:2], sdist=True) / f"peft-{PEFT[1]}"
    return own_tests(
        tmp_path_factory, sdist, port(PEFT), PEFT_UNIT_TESTS, extra=PEFT_TEST_FILES, env={"HF_HUB_OFFLINE": "1"}
    )


@pytest.mark.slow
def test_peft_own_tests_of_the_ported_modules_pass_on_the_npu(peft_unit_tests):
    emulated, reference, report = peft_unit_tests
    # The original passes them on CPU (one MonteCLoRA case skips: it tests LoRA's bias warnings only).
    assert len(reference) >= 80 and all(outcome in ("passed", "skipped") for outcome in reference.values()), reference
    assert sum(outcome == "skipped" for outcome in reference.values()) <= 1, reference
    assert any("Monteclora" in test for test in reference) and any("dora" in test for test in reference)
    # The ported tests (their patches of torch.cuda.is_available/empty_cache are torch.npu's: the port's npu
    # branch in prepare_model_for_kbit_training answers them) pass on the ported copy, on the npu.
    assert emulated.keys() == reference.keys()
    assert {test: outcome for test, outcome in emulated.items() if outcome != reference[test]} == {}
    # the custom models ran on the npu: autocast asked for its dtypes; the port's empty_cache branch ran
    assert calls(report).get("torch.npu.get_amp_supported_dtype", 0) > 0, calls(report)
    assert calls(report).get("torch.npu.empty_cache", 0) == 1, calls(report)
    assert not report.get("not_implemented"), report


_PEFT_DDP: dict[int, tuple[list[dict], list[dict], dict]] = {}


@pytest.fixture(scope="module")
def peft_process_group(port, tmp_path_factory):
    """peft_process_group(world) -> (the emulated ranks, the original's ranks on CPU with gloo, emulate report)."""

    def ran(world: int) -> tuple[list[dict], list[dict], dict]:
        if world not in _PEFT_DDP:
            folder = tmp_path_factory.mktemp(f"peft-ddp-{world}")
            driver = ddp_driver(folder, "lora_ddp.py", PEFT_DDP)
            _PEFT_DDP[world] = process_group_runs(folder, port(PEFT), world, 29542, driver)
        return _PEFT_DDP[world]

    return ran


@pytest.mark.slow
@pytest.mark.parametrize("world", [1, 2])
def test_peft_lora_in_ddp_on_hccl_with_one_and_two_processes(port, peft_process_group, world):
    emulated, reference, report = peft_process_group(world)
    assert [rank["rank"] for rank in emulated] == [rank["rank"] for rank in reference] == list(range(world))
    for npu, cpu in zip(emulated, reference, strict=True):
        assert Path(npu["package"]).is_relative_to(port(PEFT)), npu["package"]
        assert Path(cpu["package"]).is_relative_to(installed(*PEFT)), cpu["package"]
        assert (npu["device"], npu["backend"]) == ("npu", "hccl") and (cpu["device"], cpu["backend"]) == ("cpu", "gloo")
        assert npu["param_devices"] == npu["grad_devices"] == ["npu"], npu
        # the 8 LoRA matrices (2 layers x q_proj, v_proj x A, B) have gradients: the mean of every rank's
        print("emulated", npu, "original", cpu)
        assert npu["trainable"] == npu["grads"] == cpu["grads"] == 8
        assert npu["grad_error"] <= 1e-6 and cpu["grad_error"] <= 1e-6, (npu, cpu)
        # the original's values (fp32 on the CPU's kernels: only the order of a sum may differ)
        for key in ("grad_norm", "mean_loss", "param_sum"):
            assert abs(npu[key] - cpu[key]) <= FP32_TOLERANCE * max(1.0, abs(cpu[key])), (key, npu, cpu)
    # every rank's step gives the same parameters; with two, DDP averaged two batches' gradients
    assert len({rank["param_sum"] for rank in emulated}) == 1, emulated
    if world == 2:
        assert emulated[0]["grad_norm"] == emulated[1]["grad_norm"]
    assert calls(report).get("torch.npu.set_device", 0) == world, calls(report)
    assert not report.get("not_implemented") and not report.get("stayed_on_cpu"), report
