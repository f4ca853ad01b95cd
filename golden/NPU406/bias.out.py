import torch
try:
    from xformers.ops import memory_efficient_attention
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    memory_efficient_attention = None
try:
    # TODO(ascend-port): NPU409 [low] xformers has no NPU build, so this import fails there: port BlockDiagonalMask by hand (NPU400-NPU406 port its attention calls)
    from xformers.ops.fmha import BlockDiagonalMask
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    BlockDiagonalMask = None


def packed(q, k, v, seqlens):
    bias = BlockDiagonalMask.from_seqlens(seqlens)
    # TODO(ascend-port): NPU406 [low] memory_efficient_attention left on xformers: attn_bias=bias is not an inline None/LowerTriangularMask()/LowerTriangularFromBottomRightMask() (BlockDiagonalMask -> varlen layout TND with cumulative sequence ends; a tensor bias -> pse, which the op adds before scaling)
    return memory_efficient_attention(q, k, v, attn_bias=bias)


def biased(q, k, v, rel_pos):
    # TODO(ascend-port): NPU406 [low] memory_efficient_attention left on xformers: attn_bias=rel_pos is not an inline None/LowerTriangularMask()/LowerTriangularFromBottomRightMask() (BlockDiagonalMask -> varlen layout TND with cumulative sequence ends; a tensor bias -> pse, which the op adds before scaling)
    return memory_efficient_attention(q, k, v, rel_pos)
