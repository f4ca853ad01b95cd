import torch

try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port apply_rotary_emb by hand (NPU400-NPU406 port its attention calls)
    from flash_attn.layers.rotary import apply_rotary_emb
except ImportError:
    apply_rotary_emb = None


def rotate(x, cos, sin):
    if apply_rotary_emb is None:
        return x
    return apply_rotary_emb(x, cos, sin)
