"""CPU references of the torch_npu (and MindIE-SD) ops that ascend-port emits. Test code only.

The implementation moved to ascend_port/emulate/ops.py, shared with the NPU emulator's stand-in torch_npu; this
module re-exports it so the tests keep importing ``npu_reference``.
"""

# ruff: noqa: F405
from __future__ import annotations

from ascend_port.emulate.ops import *  # noqa: F403

__all__ = [
    "INT_MAX",
    "OpContractError",
    "OpTypeError",
    "compressed_causal_mask",
    "mindiesd_attention_forward",
    "npu_fusion_attention",
    "npu_gemma_rms_norm",
    "npu_rms_norm",
    "npu_rotary_mul",
    "npu_swiglu",
]
