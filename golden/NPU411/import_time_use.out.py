import torch
# TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port MHA by hand (NPU400-NPU406 port its attention calls)
from flash_attn.modules.mha import MHA
try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port RMSNorm by hand (NPU400-NPU406 port its attention calls)
    from flash_attn.ops.triton.layer_norm import RMSNorm as FlashRMSNorm
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    FlashRMSNorm = None


class Attention(MHA):
    # a base class is evaluated at import: the guard would not help, the import is left with its TODO
    pass


def norm(dim):
    return FlashRMSNorm(dim)


NORM = norm
