"""The names of the helpers the attention rules write into ported modules (their code: helpers.py). Light: the
shared-helpers project step needs them on every run, LibCST only when it writes a module."""

from __future__ import annotations

FLASH_HELPER = "_npu_flash_attn"
XFORMERS_HELPER = "_npu_memory_efficient_attention"
MASK_CACHE = "_NPU_ATTENTION_MASKS"
PADDING_HELPERS = ("_npu_index_first_axis", "_npu_index_put_first_axis", "_npu_unpad_input", "_npu_pad_input")
PRIVATE_TORCH = "_torch"  # a helper's own name for torch, imported in its body

# helper -> the helpers it calls (written first when missing)
DEPENDS = {FLASH_HELPER: (), XFORMERS_HELPER: (FLASH_HELPER,), **{name: () for name in PADDING_HELPERS}}
