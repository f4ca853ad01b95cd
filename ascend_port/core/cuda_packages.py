"""The CUDA-only packages: which requirements cannot go on an NPU host, and why (the notes NPU600 writes where it
comments them out, and the package matrix of the reports)."""

from __future__ import annotations

import re

_FLASH = FLASH_REASON = "CUDA-only; torch_npu.npu_fusion_attention replaces it"
# The reason where no flash-attn call of the run was replaced (rules/project/requirements.FlashReason swaps it in):
# the package still cannot be installed on an NPU host, but nothing in the port took over its calls.
FLASH_REASON_UNPORTED = "CUDA-only (no NPU build); its NPU counterpart is torch_npu.npu_fusion_attention"
_XFORMERS = "CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention"
_NVML = "NVML bindings for NVIDIA drivers; query NPUs with npu-smi or torch.npu"
_NVIDIA = "NVIDIA CUDA library wheel; CANN provides the Ascend runtime"
_CUPY = "CuPy built for CUDA; there is no Ascend build"
_TRANSFORMER_ENGINE = "NVIDIA Transformer Engine (FP8 kernels for NVIDIA GPUs); there is no Ascend build"
_FLASHINFER = "FlashInfer kernels are CUDA-only; torch_npu.npu_fusion_attention replaces its attention"


def removal_reason(key: str) -> str | None:
    """Why a requirement (by canonical name) must go on an NPU host, or None when it stays."""
    if key == "flash-attn" or key.startswith("flash-attn-"):
        return _FLASH
    if key == "xformers":
        return _XFORMERS
    if key in ("pynvml", "nvidia-ml-py", "nvidia-ml-py3"):
        return _NVML
    if key.startswith("nvidia-"):
        return _NVIDIA
    if key.startswith("cupy-cuda"):
        return _CUPY
    if key == "transformer-engine" or key.startswith("transformer-engine-"):
        return _TRANSFORMER_ENGINE
    if key in ("flashinfer", "flashinfer-python"):
        return _FLASHINFER
    return None


_CUDA_RUNTIME = "CUDA toolkit; CANN provides the Ascend runtime"


def conda_removal_reason(name: str) -> str | None:
    """Why a conda package must go on an NPU host (the CUDA runtime, CUDA-only packages), else None."""
    key = name.lower()
    if key == "pytorch-cuda":
        return "selects the CUDA build of pytorch; torch_npu needs the CPU build"
    if key in ("cudatoolkit", "cudatoolkit-dev", "cuda", "cuda-toolkit") or key.startswith("cuda-"):
        return _CUDA_RUNTIME
    if key == "cudnn" or key.startswith(("libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse")):
        return "CUDA library; CANN provides the Ascend counterparts"
    if key == "nccl":
        return "NVIDIA collectives library; torch_npu uses HCCL (from CANN)"
    if key.startswith("magma-cuda"):
        return "MAGMA built for CUDA; torch's CPU build does not use it"
    if key == "cupy":
        return _CUPY
    return removal_reason(re.sub(r"[-_.]+", "-", key))
