"""Rotary embeddings with flash-attn's fused kernel."""

import torch
try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port apply_rotary_emb by hand (NPU400-NPU406 port its attention calls)
    from flash_attn.layers.rotary import apply_rotary_emb
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    apply_rotary_emb = None
try:
    import xformers.ops as xops
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    xops = None


def rotate(x, cos, sin):
    return apply_rotary_emb(x, cos, sin)


def attend(q, k, v, bias):
    # TODO(ascend-port): NPU406 [low] memory_efficient_attention left on xformers: attn_bias=bias is not an inline None/LowerTriangularMask()/LowerTriangularFromBottomRightMask() (BlockDiagonalMask -> varlen layout TND with cumulative sequence ends; a tensor bias -> pse, which the op adds before scaling)
    return xops.memory_efficient_attention(q, k, v, attn_bias=bias)
