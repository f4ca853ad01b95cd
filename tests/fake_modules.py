"""Fake `flash_attn`, `xformers`, `apex`, `liger_kernel` (GPU side) and `torch_npu`, `mindiesd` (NPU side) modules
backed by the CPU references, so original and ported golden code can run here. torch-npu itself is never installed
(it breaks `import torch` without CANN)."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator

import apex_reference
import gpu_reference as gpu
import npu_reference as npu

FLASH_NAMES = (
    "flash_attn_func",
    "flash_attn_qkvpacked_func",
    "flash_attn_kvpacked_func",
    "flash_attn_varlen_func",
    "flash_attn_varlen_qkvpacked_func",
    "flash_attn_varlen_kvpacked_func",
    "flash_attn_with_kvcache",
)
PADDING_NAMES = (
    "pad_input",
    "unpad_input",
    "unpad_input_for_concatenated_sequences",
    "index_first_axis",
    "index_put_first_axis",
    "IndexFirstAxis",
    "IndexPutFirstAxis",
)
MASKS = ("LowerTriangularMask", "LowerTriangularFromBottomRightMask", "BlockDiagonalMask")
GPU_PACKAGES = ("flash_attn", "xformers", "apex", "liger_kernel")
NPU_PACKAGES = ("torch_npu", "mindiesd")


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


# apex.optimizers on CPU: the strict references of apex_reference.py (fp32 moments, `step` per param group, both
# adam_w_mode values), not torch.optim's AdamW, which the NPU505 port writes and which must be checked against them.
FusedAdam, FusedSGD = apex_reference.ApexFusedAdam, apex_reference.ApexFusedSGD


def apply_liger_kernel_to_llama(*args, **kwargs):
    """Liger-Kernel's monkey patch of transformers' Llama (Triton kernels): a CUDA-only side effect, so nothing."""


def gpu_modules() -> dict[str, types.ModuleType]:
    flash = {n: getattr(gpu, n) for n in FLASH_NAMES}
    masks = {n: getattr(gpu, n) for n in MASKS}
    interface = _module("flash_attn.flash_attn_interface", **flash)
    attn_bias = _module("xformers.ops.fmha.attn_bias", **masks)
    fmha = _module(
        "xformers.ops.fmha", attn_bias=attn_bias, memory_efficient_attention=gpu.memory_efficient_attention, **masks
    )
    ops = _module("xformers.ops", fmha=fmha, memory_efficient_attention=gpu.memory_efficient_attention, **masks)
    normalization = _module("apex.normalization", FusedRMSNorm=gpu.FusedRMSNorm, FusedLayerNorm=gpu.FusedLayerNorm)
    bert_padding = _module("flash_attn.bert_padding", **{n: getattr(gpu, n) for n in PADDING_NAMES})
    optimizers = _module("apex.optimizers", FusedAdam=FusedAdam, FusedSGD=FusedSGD)
    liger = _module("liger_kernel.transformers", apply_liger_kernel_to_llama=apply_liger_kernel_to_llama)
    return {
        "flash_attn": _module(
            "flash_attn",
            flash_attn_interface=interface,
            bert_padding=bert_padding,
            __version__=gpu.FLASH_ATTN_VERSION,
            **flash,
        ),
        "flash_attn.flash_attn_interface": interface,
        "flash_attn.bert_padding": bert_padding,
        "xformers": _module("xformers", ops=ops),
        "xformers.ops": ops,
        "xformers.ops.fmha": fmha,
        "xformers.ops.fmha.attn_bias": attn_bias,
        "apex": _module("apex", normalization=normalization, optimizers=optimizers),
        "apex.normalization": normalization,
        "apex.optimizers": optimizers,
        "liger_kernel": _module("liger_kernel", transformers=liger),
        "liger_kernel.transformers": liger,
    }


def npu_modules() -> dict[str, types.ModuleType]:
    ops = (
        "npu_fusion_attention",
        "npu_rms_norm",
        "npu_gemma_rms_norm",
        "npu_rotary_mul",
        "npu_swiglu",
        "npu_geglu",
        "npu_scaled_masked_softmax",
    )
    return {
        "torch_npu": _module("torch_npu", **{n: getattr(npu, n) for n in ops}),
        "mindiesd": _module("mindiesd", attention_forward=npu.mindiesd_attention_forward),
    }


# The test of a fused rewrite's dispatch on the tensor's device (rules/attention/norms.py: other devices' tensors
# keep the original computation).
NPU_TEST = '.device.type == "npu"'


def on_npu_tensors(text: str) -> str:
    """A ported text as it runs on NPU tensors, where the tests' CPU tensors stand for them: its dispatches take
    the NPU branch (the fused ops, which the fakes and the emulator run) for CPU tensors too."""
    return text.replace(NPU_TEST, '.device.type in ("npu", "cpu")')


@contextlib.contextmanager
def installed(side: str, calls: list[str] | None = None) -> Iterator[None]:
    """Install one side's fakes (``gpu`` or ``npu``) and block the other side's packages for the duration; ``both``
    installs both sides (a port that keeps some GPU calls, each marked with a TODO).

    With ``calls``, the name of every fake function called is appended to it (which kernel ran).
    """
    modules = {
        **(gpu_modules() if side in ("gpu", "both") else {}),
        **(npu_modules() if side in ("npu", "both") else {}),
    }
    blocked = {"gpu": NPU_PACKAGES, "npu": GPU_PACKAGES, "both": ()}[side]
    if calls is not None:
        for module in modules.values():
            for name, value in list(vars(module).items()):
                if callable(value) and not isinstance(value, type) and not name.startswith("_"):
                    setattr(module, name, _recording(value, name, calls))
    saved = {name: sys.modules.get(name) for name in [*modules, *blocked]}
    try:
        sys.modules.update(modules)
        for name in blocked:
            sys.modules[name] = None  # `import name` raises ImportError
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _recording(function, name: str, calls: list[str]):
    def wrapper(*args, **kwargs):
        calls.append(name)
        return function(*args, **kwargs)

    return wrapper
